// Read path: commits / PRs that changed a candidate service, directly or through its code,
// known to the graph at $at (null: now).
MATCH (c:Change)-[r:CHANGED]->(s:Service)
WHERE s.name IN $names AND <<visible_at:c>> AND <<visible_at:r>>
RETURN s.name AS service, properties(c) AS props
LIMIT $limit
UNION ALL
MATCH (c:Change)-[r:CHANGED]->(:CodeUnit)-[:IMPLEMENTS]->(s:Service)
WHERE s.name IN $names AND <<visible_at:c>> AND <<visible_at:r>>
RETURN s.name AS service, properties(c) AS props
LIMIT $limit
