// Phase 1 of an edge write: unchanged edges (for this writer tag; Stale ones are rewritten) only advance their clocks.
UNWIND $rows AS r
MATCH (a:<<src_label>> {<<src_key>>})-[e:<<type>><<edge_key>>]->(b:<<dst_label>> {<<dst_key>>})
WHERE e.<<hash>> = r.h AND e.source = r.s AND e.status = r.st AND e.confidence = r.c
SET e.last_seen = $now, e.last_scan = $now
RETURN collect(r.i) AS touched
