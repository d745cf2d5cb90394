// Nodes from one source not seen since the cutoff turn Stale (never deleted).
// stale_at keeps every transition for time travel (frag_visible_at).
MATCH (n:<<label>>)
WHERE n.source = $source AND n.last_seen < $cutoff AND n.status <> 'Stale'
SET n.status = 'Stale', n.content_hash = 'stale', n.last_scan = $now,
    n.stale_at = coalesce(n.stale_at, []) + [$now]
RETURN count(n) AS n
