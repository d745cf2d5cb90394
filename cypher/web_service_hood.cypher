// Web UI, service page: one hop around the named services ($names) in both directions, as
// the graph held it at $at (null: now), each edge with its provenance and telemetry. The
// edge types are the topology of the five layers (telemetry, infra, code, messaging);
// deploys and changes are listed apart (rca_changes_history), outcome edges are left out.
MATCH (s:Service) WHERE s.name IN $names AND <<visible_at:s>>
MATCH (s)-[e:CALLS|READS_FROM|PUBLISHES_TO|CONSUMES_FROM|DEPLOYED_AS|RUNS_ON|IN_NAMESPACE|ROUTES_TO|IMPLEMENTS]-(n)
WHERE <<visible_at:e>> AND <<visible_at:n>>
RETURN s.name AS from, type(e) AS type, startNode(e) = s AS outgoing, labels(n)[0] AS label,
       coalesce(n.name, n.subject, n.path, n.host) AS name, e.source AS source,
       e.status AS status, e.error_rate AS error_rate, e.latency_p95_ms AS p95_ms
LIMIT $limit
