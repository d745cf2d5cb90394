// Read path: the anchor's direct callers (one hop upstream), with the calling edge.
MATCH (c)-[e:CALLS]->(s:Service {name: $anchor})
WHERE c <> s
RETURN c.name AS name, labels(c)[0] AS label, properties(c) AS props,
       type(e) AS type, properties(e) AS edge,
       indegree(c) AS fan_in, outdegree(c) AS fan_out
LIMIT $limit
