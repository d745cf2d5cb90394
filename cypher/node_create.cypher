// A node write into a label that had no node when the write began: each row names a node
// not written before in this write, so it is created without looking for it first.
UNWIND $rows AS r
CREATE (n:<<label>> {<<key>>})
SET n += <<p>>,
    n.<<hash>> = r[1],
    n.sources = [r[2]],
    n.first_seen = $now,
    n.last_seen = $now,
    n.last_scan = $now
RETURN count(n) AS created, collect([r[0], id(n)]) AS ids
