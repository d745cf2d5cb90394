// Names of the Service and Datastore nodes already in the graph (lanes read, never write).
MATCH (s)
WHERE s:Service OR s:Datastore
RETURN labels(s)[0] AS label, s.name AS name
LIMIT 100000
