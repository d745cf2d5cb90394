// Edges whose latest source is $source, not seen since the cutoff, turn Stale (never
// deleted). stale_at keeps every transition for time travel (frag_visible_at).
// A later sighting skips the touch phase (it only touches non-Stale facts) and revives it.
MATCH ()-[e:<<type>>]->()
WHERE e.source = $source AND e.last_seen < $cutoff AND e.status <> 'Stale'
SET e.status = 'Stale', e.last_scan = $now,
    e.stale_at = coalesce(e.stale_at, []) + [$now]
RETURN count(e) AS n
