// Read path: the anchor's downstream dependency neighbourhood within 2 hop(s), as paths.
// One template per hop count (the clamped set 1..4); LIMIT bounds the paths returned.
MATCH (s:Service {name: $anchor})
MATCH p = (s)-[:CALLS|READS_FROM*1..2]->(t)
WHERE t <> s
RETURN [x IN nodes(p) | x.name] AS names,
       [e IN relationships(p) | type(e)] AS types,
       [e IN relationships(p) | properties(e)] AS edges,
       labels(t)[0] AS label, properties(t) AS props,
       indegree(t) AS fan_in, outdegree(t) AS fan_out
LIMIT $limit
