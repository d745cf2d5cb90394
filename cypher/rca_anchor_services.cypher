// Read path, anchor: which of the candidate names are Services (at $at; null: now).
MATCH (s:Service)
WHERE s.name IN $names AND <<existed_at:s>>
RETURN s.name AS name, s.criticality AS criticality, s.source AS source,
       <<status_at:s>> AS status, s.last_seen AS last_seen, indegree(s) AS fan_in,
       outdegree(s) AS fan_out
LIMIT $limit
