// What an incident was root-caused by, with the edge's outcome properties.
MATCH (i:Incident {fingerprint: $fingerprint})-[r:ROOT_CAUSED_BY]->(x)
RETURN labels(x)[0] AS label, properties(x) AS node, properties(r) AS p
LIMIT $limit
