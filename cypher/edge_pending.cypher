// After a touch that fell short: which edge rows are new or changed (for this writer tag).
UNWIND $rows AS r
OPTIONAL MATCH (:<<src_label>> {<<src_key>>})-[e:<<type>><<edge_key>>]->(:<<dst_label>> {<<dst_key>>})
WITH r, e
// (a missing hash is null, and NOT null is null: coalesce keeps such rows)
WHERE e IS NULL OR NOT coalesce(e.<<hash>> = r.h AND e.source = r.s
    AND e.status = r.st AND e.confidence = r.c, false)
RETURN collect(r.i) AS pending
