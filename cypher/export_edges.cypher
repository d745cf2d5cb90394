MATCH (a)-[e:<<type>>]->(b)
WHERE id(e) > $after
RETURN id(e) AS id, labels(a)[0] AS src_label, properties(a) AS src, properties(e) AS p,
       labels(b)[0] AS dst_label, properties(b) AS dst
ORDER BY id(e)
LIMIT $limit
