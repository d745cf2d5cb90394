// Read path: commits / PRs that changed a candidate service, directly or through its code.
MATCH (c:Change)-[:CHANGED]->(s:Service)
WHERE s.name IN $names
RETURN s.name AS service, properties(c) AS props
LIMIT $limit
UNION ALL
MATCH (c:Change)-[:CHANGED]->(:CodeUnit)-[:IMPLEMENTS]->(s:Service)
WHERE s.name IN $names
RETURN s.name AS service, properties(c) AS props
LIMIT $limit
