// After a touch that fell short: which rows are new or changed (for this writer tag).
UNWIND $rows AS r
OPTIONAL MATCH (n:<<label>> {<<key>>})
WITH r, n
// (a missing hash is null, and NOT null is null: coalesce keeps such rows)
WHERE n IS NULL OR NOT coalesce(n.<<hash>> = r[1] AND n.source = r[2]
    AND n.status = r[3] AND n.confidence = r[4], false)
RETURN collect(r[0]) AS pending
