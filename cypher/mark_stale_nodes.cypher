// Nodes from one source not seen since the cutoff turn Stale (never deleted).
MATCH (n:<<label>>)
WHERE n.source = $source AND n.last_seen < $cutoff AND n.status <> 'Stale'
SET n.status = 'Stale', n.content_hash = 'stale', n.last_scan = $now
RETURN count(n) AS n
