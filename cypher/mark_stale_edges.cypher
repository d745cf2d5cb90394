// Edges from one source not seen since the cutoff turn Stale (never deleted).
// stale_at keeps every transition for time travel (frag_visible_at).
// The content hash is reset so a later sighting rewrites the edge as Active.
MATCH ()-[e:<<type>>]->()
WHERE e.source = $source AND e.last_seen < $cutoff AND e.status <> 'Stale'
SET e.status = 'Stale', e.content_hash = 'stale', e.last_scan = $now,
    e.stale_at = coalesce(e.stale_at, []) + [$now]
RETURN count(e) AS n
