// Web UI: the call and read edges among the nodes of an incident's blame subgraph, with
// their telemetry and provenance (drawn by stackgraph/web/blame_graph.py). Nodes are named
// as the plan names them: a Service by its name, a code unit by its path.
MATCH (a:Service) WHERE a.name IN $names
MATCH (a)-[e:CALLS|READS_FROM]->(b)
WHERE coalesce(b.name, b.path) IN $names AND coalesce(b.name, b.path) <> a.name
RETURN a.name AS src, type(e) AS type, coalesce(b.name, b.path) AS dst,
       labels(b)[0] AS dst_label, e.error_rate AS error_rate, e.latency_p95_ms AS p95_ms,
       e.source AS source, e.status AS status
LIMIT $limit
UNION ALL
MATCH (a:CodeUnit) WHERE a.path IN $names
MATCH (a)-[e:CALLS|READS_FROM]->(b)
WHERE coalesce(b.name, b.path) IN $names AND coalesce(b.name, b.path) <> a.path
RETURN a.path AS src, type(e) AS type, coalesce(b.name, b.path) AS dst,
       labels(b)[0] AS dst_label, e.error_rate AS error_rate, e.latency_p95_ms AS p95_ms,
       e.source AS source, e.status AS status
LIMIT $limit
