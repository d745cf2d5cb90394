// Phase 2 of a node write: new or changed rows, merged on the natural key. Rows are
// [i, hash, source, status, confidence, key..., properties]. `sources` accumulates every
// source that asserted the node; `source` is the latest full writer. A Stale node seen
// again is revived, and the revival time kept for time travel.
UNWIND $rows AS r
MERGE (n:<<label>> {<<key>>})
WITH n, r, n.first_seen AS born, n.status AS was
SET n += <<p>>,
    n.<<hash>> = r[1],
    n.sources = CASE WHEN r[2] IN coalesce(n.sources, []) THEN n.sources
        ELSE coalesce(n.sources, []) + [r[2]] END,
    n.first_seen = coalesce(born, $now),
    n.last_seen = $now,
    n.last_scan = $now,
    n.revived_at = CASE WHEN was = 'Stale' AND r[3] <> 'Stale'
        THEN coalesce(n.revived_at, []) + [$now] ELSE n.revived_at END
RETURN sum(CASE WHEN born IS NULL THEN 1 ELSE 0 END) AS created, count(n) AS written,
    collect([r[0], id(n)]) AS ids
