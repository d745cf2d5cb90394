// After a touch that fell short: which edge rows are new or changed (for this writer tag).
UNWIND $rows AS r
WITH r, r[5] AS ia, r[6] AS ib
MATCH (a) WHERE id(a) = ia
MATCH (b) WHERE id(b) = ib
OPTIONAL MATCH (a)-[e:<<type>><<edge_key>>]->(b)
WITH r, e
// (a missing hash is null, and NOT null is null: coalesce keeps such rows)
WHERE e IS NULL OR NOT coalesce(e.<<hash>> = r[1] AND e.source = r[2]
    AND e.status = r[3] AND e.confidence = r[4], false)
RETURN collect(r[0]) AS pending
