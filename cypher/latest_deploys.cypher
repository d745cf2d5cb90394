// The newest deploys of the given services, newest first (e.g. the demo's rollout table).
MATCH (d:Deploy)-[:DEPLOYED]->(s:Service)
WHERE s.name IN $names
RETURN s.name AS service, properties(d) AS props
ORDER BY d.deployed_at DESC
LIMIT $limit
