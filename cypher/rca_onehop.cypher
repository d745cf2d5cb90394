// Benchmark reference: the raw one-hop neighbourhood of one service with edge telemetry.
MATCH (s:Service {name: $anchor})-[e:CALLS]->(t)
RETURN t.name AS name, e.trace_count AS trace_count, e.error_rate AS error_rate,
       e.latency_p95_ms AS latency_p95_ms, e.status AS status
LIMIT $limit
