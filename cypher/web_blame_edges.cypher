// Web UI: the call and read edges among the services of an incident's blame subgraph, with
// their telemetry and provenance (drawn by stackgraph/web/blame_graph.py).
MATCH (a:Service) WHERE a.name IN $names
MATCH (a)-[e:CALLS|READS_FROM]->(b)
WHERE b.name IN $names AND b.name <> a.name
RETURN a.name AS src, type(e) AS type, b.name AS dst, labels(b)[0] AS dst_label,
       e.error_rate AS error_rate, e.latency_p95_ms AS p95_ms,
       e.source AS source, e.status AS status
LIMIT $limit
