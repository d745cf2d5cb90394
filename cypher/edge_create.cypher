// An edge write into a relationship type that had no edge when the write began: each row
// names an edge not written before in this write, so it is created without a MERGE.
UNWIND $rows AS r
WITH r, r[5] AS ia, r[6] AS ib
MATCH (a) WHERE id(a) = ia
MATCH (b) WHERE id(b) = ib
CREATE (a)-[e:<<type>><<edge_key>>]->(b)
SET e += <<p>>,
    e.<<hash>> = r[1],
    e.sources = [r[2]],
    e.first_seen = $now,
    e.last_seen = $now,
    e.last_scan = $now
RETURN count(e) AS created
