// One record per query: the naive writer, kept as the benchmark's reference.
MATCH (a:<<src_label>> {<<src_key_one>>})
MATCH (b:<<dst_label>> {<<dst_key_one>>})
MERGE (a)-[e:<<type>>]->(b)
SET e += $p,
    e.<<hash>> = $h,
    e.first_seen = coalesce(e.first_seen, $now),
    e.last_seen = $now,
    e.last_scan = $now
