// query_stack_graph: edges leaving the named services (one hop; the caller bounds hops).
MATCH (a:Service) WHERE a.name IN $names
MATCH (a)-[e]->(b)
RETURN labels(a)[0] AS a_label, properties(a) AS a, type(e) AS type, properties(e) AS p,
       labels(b)[0] AS b_label, properties(b) AS b
LIMIT $limit
