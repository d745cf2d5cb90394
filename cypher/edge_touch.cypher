// Phase 1 of an edge write: edges whose content hash (for this writer tag) and provenance
// are unchanged only advance their clocks. Only the count comes back; when it falls short,
// `edge_pending` names the rows phase 2 must write. Both ends by id, then the edge
// between them (Expand Into), not every edge out of the source.
UNWIND $rows AS r
WITH r, r[5] AS ia, r[6] AS ib
MATCH (a) WHERE id(a) = ia
MATCH (b) WHERE id(b) = ib
MATCH (a)-[e:<<type>><<edge_key>>]->(b)
WHERE e.<<hash>> = r[1] AND e.source = r[2] AND e.status = r[3] AND e.confidence = r[4]
SET e.last_seen = $now, e.last_scan = $now
RETURN count(e) AS touched
