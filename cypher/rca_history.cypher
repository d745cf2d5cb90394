// Read path: past incidents whose root cause is one of the candidates. Only Active
// ROOT_CAUSED_BY edges count: Deprecated (feedback said wrong) and Candidate (shadow mode)
// do not. At $at (null: now) only what the graph knew then.
MATCH (i:Incident)-[r:ROOT_CAUSED_BY]->(x)
WHERE x.name IN $names AND r.status = 'Active' AND <<visible_at:r>> AND <<visible_at:i>>
OPTIONAL MATCH (i)-[:AFFECTS]->(a)
WHERE a.name = $anchor
RETURN x.name AS service, count(DISTINCT i) AS incidents, count(DISTINCT a) AS on_anchor,
       max(r.confidence) AS confidence, max(i.last_seen) AS last_seen
LIMIT $limit
