// Read path, one round trip: what happened to the candidate services ($names) — rollouts
// (kind 'deploy', newest first, at most $limit), commits/PRs changing them directly or
// through their code (kind 'change', at most $limit each), and past incidents they
// root-caused (kind 'history', one row per service). The caller picks the rows it needs.
// History starts from the Incidents: a root cause may be any label, and filtering the
// names first would scan every node.
MATCH (d:Deploy)-[:DEPLOYED]->(s:Service)
WHERE s.name IN $names
RETURN 'deploy' AS kind, s.name AS service, properties(d) AS props, null AS incidents,
       null AS on_anchor, null AS confidence, null AS last_seen
ORDER BY d.deployed_at DESC
LIMIT $limit
UNION ALL
MATCH (c:Change)-[:CHANGED]->(s:Service)
WHERE s.name IN $names
RETURN 'change' AS kind, s.name AS service, properties(c) AS props, null AS incidents,
       null AS on_anchor, null AS confidence, null AS last_seen
LIMIT $limit
UNION ALL
MATCH (c:Change)-[:CHANGED]->(:CodeUnit)-[:IMPLEMENTS]->(s:Service)
WHERE s.name IN $names
RETURN 'change' AS kind, s.name AS service, properties(c) AS props, null AS incidents,
       null AS on_anchor, null AS confidence, null AS last_seen
LIMIT $limit
UNION ALL
MATCH (i:Incident)
WITH i
MATCH (i)-[r:ROOT_CAUSED_BY]->(x)
WHERE x.name IN $names
OPTIONAL MATCH (i)-[:AFFECTS]->(a)
WHERE a.name = $anchor
RETURN 'history' AS kind, x.name AS service, null AS props, count(DISTINCT i) AS incidents,
       count(DISTINCT a) AS on_anchor, max(r.confidence) AS confidence,
       max(i.last_seen) AS last_seen
LIMIT $history
