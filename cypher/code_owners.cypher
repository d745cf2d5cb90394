// code → graph: the Service each CodeUnit implements, for code-search hits.
UNWIND $units AS u
MATCH (c:CodeUnit {repo: u.repo, path: u.path})-[:IMPLEMENTS]->(s:Service)
RETURN c.repo AS repo, c.path AS path, s.name AS service, s.criticality AS criticality
