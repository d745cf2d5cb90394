// Read path, one round trip: what happened to the candidate services ($names) — rollouts
// (kind 'deploy', newest first, at most $limit), commits/PRs changing them directly or
// through their code (kind 'change', at most $limit each), and past incidents they
// root-caused (kind 'history', one row per service). The caller picks the rows it needs.
// History starts from the Incidents: a root cause may be any label, and filtering the
// names first would scan every node. Only Active ROOT_CAUSED_BY edges count: Deprecated
// (feedback said wrong) and Candidate (shadow mode) do not. At $at (null: now) only the
// rollouts, changes and incidents the graph knew then.
MATCH (d:Deploy)-[r:DEPLOYED]->(s:Service)
WHERE s.name IN $names AND <<visible_at:d>> AND <<visible_at:r>>
RETURN 'deploy' AS kind, s.name AS service, properties(d) AS props, null AS incidents,
       null AS on_anchor, null AS confidence, null AS last_seen
ORDER BY d.deployed_at DESC
LIMIT $limit
UNION ALL
MATCH (c:Change)-[r:CHANGED]->(s:Service)
WHERE s.name IN $names AND <<visible_at:c>> AND <<visible_at:r>>
RETURN 'change' AS kind, s.name AS service, properties(c) AS props, null AS incidents,
       null AS on_anchor, null AS confidence, null AS last_seen
LIMIT $limit
UNION ALL
MATCH (c:Change)-[r:CHANGED]->(:CodeUnit)-[:IMPLEMENTS]->(s:Service)
WHERE s.name IN $names AND <<visible_at:c>> AND <<visible_at:r>>
RETURN 'change' AS kind, s.name AS service, properties(c) AS props, null AS incidents,
       null AS on_anchor, null AS confidence, null AS last_seen
LIMIT $limit
UNION ALL
MATCH (i:Incident)
WHERE <<visible_at:i>>
WITH i
MATCH (i)-[r:ROOT_CAUSED_BY]->(x)
WHERE x.name IN $names AND r.status = 'Active' AND <<visible_at:r>>
OPTIONAL MATCH (i)-[:AFFECTS]->(a)
WHERE a.name = $anchor
RETURN 'history' AS kind, x.name AS service, null AS props, count(DISTINCT i) AS incidents,
       count(DISTINCT a) AS on_anchor, max(r.confidence) AS confidence,
       max(i.last_seen) AS last_seen
LIMIT $history
