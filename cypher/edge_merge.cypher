// Phase 2 of an edge write: new or changed rows, merged between endpoints found by id.
// Rows are [i, hash, source, status, confidence, src id, dst id, edge key..., properties].
// A Stale edge seen again is revived, and the revival time kept for time travel.
UNWIND $rows AS r
WITH r, r[5] AS ia, r[6] AS ib
MATCH (a) WHERE id(a) = ia
MATCH (b) WHERE id(b) = ib
MERGE (a)-[e:<<type>><<edge_key>>]->(b)
WITH e, r, e.first_seen AS born, e.status AS was
SET e += <<p>>,
    e.<<hash>> = r[1],
    e.sources = CASE WHEN r[2] IN coalesce(e.sources, []) THEN e.sources
        ELSE coalesce(e.sources, []) + [r[2]] END,
    e.first_seen = coalesce(born, $now),
    e.last_seen = $now,
    e.last_scan = $now,
    e.revived_at = CASE WHEN was = 'Stale' AND r[3] <> 'Stale'
        THEN coalesce(e.revived_at, []) + [$now] ELSE e.revived_at END
RETURN count(e) AS written, sum(CASE WHEN born IS NULL THEN 1 ELSE 0 END) AS created
