// After a touch that fell short: which rows are new or changed (for this writer tag).
UNWIND $rows AS r
OPTIONAL MATCH (n:<<label>> {<<key>>})
WITH r, n
// (a missing hash is null, and NOT null is null: coalesce keeps such rows)
WHERE n IS NULL OR NOT coalesce(n.<<hash>> = r.h AND n.source = r.s
    AND n.status = r.st AND n.confidence = r.c, false)
RETURN collect(r.i) AS pending
