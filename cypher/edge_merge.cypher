// Phase 2 of an edge write: rows whose endpoints exist are merged; rows whose endpoints
// are missing produce nothing (edge_missing finds them when the count falls short).
// A Stale edge seen again is revived, and the revival time kept for time travel.
UNWIND $rows AS r
MATCH (a:<<src_label>> {<<src_key>>})
MATCH (b:<<dst_label>> {<<dst_key>>})
MERGE (a)-[e:<<type>><<edge_key>>]->(b)
WITH e, r, e.first_seen AS born, e.status AS was
SET e += r.p,
    e.<<hash>> = r.h,
    e.sources = CASE WHEN r.p.source IN coalesce(e.sources, []) THEN e.sources
        ELSE coalesce(e.sources, []) + [r.p.source] END,
    e.first_seen = coalesce(born, $now),
    e.last_seen = $now,
    e.last_scan = $now,
    e.revived_at = CASE WHEN was = 'Stale' AND r.p.status <> 'Stale'
        THEN coalesce(e.revived_at, []) + [$now] ELSE e.revived_at END
RETURN count(e) AS written, sum(CASE WHEN born IS NULL THEN 1 ELSE 0 END) AS created
