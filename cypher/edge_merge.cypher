// Phase 2 of an edge write: rows whose endpoints exist are merged; rows whose endpoints
// are missing produce nothing (edge_missing finds them when the count falls short).
// A Stale edge seen again is revived, and the revival time kept for time travel.
UNWIND $rows AS r
MATCH (a:<<src_label>> {<<src_key>>})
MATCH (b:<<dst_label>> {<<dst_key>>})
MERGE (a)-[e:<<type>><<edge_key>>]->(b)
WITH e, r, e.content_hash AS prev, e.status AS was
SET e += r.p,
    e.content_hash = r.h,
    e.first_seen = coalesce(e.first_seen, $now),
    e.last_seen = $now,
    e.last_scan = $now,
    e.revived_at = CASE WHEN was = 'Stale' AND r.p.status <> 'Stale'
        THEN coalesce(e.revived_at, []) + [$now] ELSE e.revived_at END
RETURN count(e) AS written, sum(CASE WHEN prev IS NULL THEN 1 ELSE 0 END) AS created
