// Which edge rows name a source or target node that does not exist.
UNWIND $rows AS r
OPTIONAL MATCH (a:<<src_label>> {<<src_key>>})
OPTIONAL MATCH (b:<<dst_label>> {<<dst_key>>})
WITH r, a, b
WHERE a IS NULL OR b IS NULL
RETURN collect(r.i) AS missing
