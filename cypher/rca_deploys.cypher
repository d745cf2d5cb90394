// Read path: rollouts of the candidate services, newest first (time filter in the caller,
// which accepts epoch seconds or ISO 8601 in deployed_at).
MATCH (d:Deploy)-[:DEPLOYED]->(s:Service)
WHERE s.name IN $names
RETURN s.name AS service, properties(d) AS props
ORDER BY d.deployed_at DESC
LIMIT $limit
