// Nodes whose latest source is $source, not seen since the cutoff, turn Stale (never
// deleted). stale_at keeps every transition for time travel (frag_visible_at).
MATCH (n:<<label>>)
WHERE n.source = $source AND n.last_seen < $cutoff AND n.status <> 'Stale'
SET n.status = 'Stale', n.last_scan = $now,
    n.stale_at = coalesce(n.stale_at, []) + [$now]
RETURN count(n) AS n
