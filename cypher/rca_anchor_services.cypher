// Read path, anchor: which of the candidate names are Services. Names bind as $names.
MATCH (s:Service)
WHERE s.name IN $names
RETURN s.name AS name, properties(s) AS props, indegree(s) AS fan_in, outdegree(s) AS fan_out
LIMIT $limit
