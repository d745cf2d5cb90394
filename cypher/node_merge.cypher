// Phase 2 of a node write: new or changed rows, merged on the natural key.
UNWIND $rows AS r
MERGE (n:<<label>> {<<key>>})
WITH n, r, n.content_hash AS prev, n.status AS was
SET n += r.p,
    n.content_hash = r.h,
    n.first_seen = coalesce(n.first_seen, $now),
    n.last_seen = $now,
    n.last_scan = $now,
    n.revived_at = CASE WHEN was = 'Stale' AND r.p.status <> 'Stale'
        THEN coalesce(n.revived_at, []) + [$now] ELSE n.revived_at END
RETURN sum(CASE WHEN prev IS NULL THEN 1 ELSE 0 END) AS created, count(n) AS written
