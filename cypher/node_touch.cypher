// Phase 1 of a node write: rows whose content hash (for this writer tag) is unchanged only
// advance their clocks. (FalkorDB refuses SET on an OPTIONAL MATCH miss and ignores SET
// inside FOREACH, so the touched rows come back and the writer derives the rest.)
UNWIND $rows AS r
MATCH (n:<<label>> {<<key>>})
WHERE n.<<hash>> = r.h AND n.source = r.s AND n.status = r.st AND n.confidence = r.c
SET n.last_seen = $now, n.last_scan = $now
RETURN collect(r.i) AS touched
