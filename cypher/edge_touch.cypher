// Phase 1 of an edge write: edges whose content hash (for this writer tag) and provenance
// are unchanged only advance their clocks. Only the count comes back; when it falls short,
// `edge_pending` names the rows phase 2 must write.
UNWIND $rows AS r
MATCH (a:<<src_label>> {<<src_key>>})-[e:<<type>><<edge_key>>]->(b:<<dst_label>> {<<dst_key>>})
WHERE e.<<hash>> = r.h AND e.source = r.s AND e.status = r.st AND e.confidence = r.c
SET e.last_seen = $now, e.last_scan = $now
RETURN count(e) AS touched
