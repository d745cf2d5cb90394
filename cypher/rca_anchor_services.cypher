// Read path, anchor: which of the candidate names are Services. Names bind as $names.
MATCH (s:Service)
WHERE s.name IN $names
RETURN s.name AS name, s.criticality AS criticality, s.source AS source, s.status AS status,
       s.last_seen AS last_seen, indegree(s) AS fan_in, outdegree(s) AS fan_out
LIMIT $limit
