// query_stack_graph: edges arriving at the named services (one hop; the caller bounds hops).
MATCH (b:Service) WHERE b.name IN $names
MATCH (a)-[e]->(b)
RETURN labels(a)[0] AS a_label, properties(a) AS a, type(e) AS type, properties(e) AS p,
       labels(b)[0] AS b_label, properties(b) AS b
LIMIT $limit
