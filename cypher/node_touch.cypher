// Phase 1 of a node write: rows whose content is unchanged only advance their clocks.
UNWIND $rows AS r
MATCH (n:<<label>> {<<key>>})
WHERE n.content_hash = r.h
SET n.last_seen = $now, n.last_scan = $now
RETURN collect(r.i) AS touched
