// Read path: past incidents whose validated root cause is one of the candidates.
MATCH (i:Incident)-[r:ROOT_CAUSED_BY]->(x)
WHERE x.name IN $names
OPTIONAL MATCH (i)-[:AFFECTS]->(a)
WHERE a.name = $anchor
RETURN x.name AS service, count(DISTINCT i) AS incidents, count(DISTINCT a) AS on_anchor,
       max(r.confidence) AS confidence, max(i.last_seen) AS last_seen
LIMIT $limit
