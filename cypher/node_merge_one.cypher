// One record per query: the naive writer, kept as the benchmark's reference.
MERGE (n:<<label>> {<<key_one>>})
SET n += $p,
    n.<<hash>> = $h,
    n.first_seen = coalesce(n.first_seen, $now),
    n.last_seen = $now,
    n.last_scan = $now
