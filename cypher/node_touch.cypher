// Phase 1 of a node write: rows whose content hash (for this writer tag) and provenance are
// unchanged only advance their clocks. The count comes back, with the touched nodes' ids
// (this write's edges find their endpoints by them); when the count falls short,
// `node_pending` names the rows phase 2 must write.
UNWIND $rows AS r
MATCH (n:<<label>> {<<key>>})
WHERE n.<<hash>> = r[1] AND n.source = r[2] AND n.status = r[3] AND n.confidence = r[4]
SET n.last_seen = $now, n.last_scan = $now
RETURN count(n) AS touched, collect([r[0], id(n)]) AS ids
