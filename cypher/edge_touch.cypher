// Phase 1 of an edge write: unchanged edges only advance their clocks.
UNWIND $rows AS r
MATCH (a:<<src_label>> {<<src_key>>})-[e:<<type>><<edge_key>>]->(b:<<dst_label>> {<<dst_key>>})
WHERE e.content_hash = r.h
SET e.last_seen = $now, e.last_scan = $now
RETURN collect(r.i) AS touched
