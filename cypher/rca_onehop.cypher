// Benchmark reference: the raw one-hop neighbourhood of one service.
MATCH (s:Service {name: $anchor})-[e:CALLS]->(t)
RETURN t.name AS name, properties(e) AS edge
LIMIT $limit
