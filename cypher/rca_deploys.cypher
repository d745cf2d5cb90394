// Read path: rollouts of the candidate services known at $at (null: now), newest first
// (time filter in the caller, which accepts epoch seconds or ISO 8601 in deployed_at).
MATCH (d:Deploy)-[r:DEPLOYED]->(s:Service)
WHERE s.name IN $names AND <<visible_at:d>> AND <<visible_at:r>>
RETURN s.name AS service, properties(d) AS props
ORDER BY d.deployed_at DESC
LIMIT $limit
