// Read path: the other services of the anchor's namespace (where both name one), for an
// anchor the graph links to nothing: without a call known in or out of it, the graph cannot
// say what the alert depends on. At $at (null: now) only nodes that existed then. At most
// $limit, in name order.
MATCH (s:Service {name: $anchor})
WHERE <<existed_at:s>>
MATCH (t:Service)
WHERE t <> s AND <<existed_at:t>>
  AND (s.namespace IS NULL OR t.namespace IS NULL OR t.namespace = s.namespace)
RETURN t.name AS name, labels(t)[0] AS label, t.criticality AS criticality,
       t.source AS source, <<status_at:t>> AS status, t.last_seen AS last_seen,
       indegree(t, 'CALLS', 'READS_FROM', 'PUBLISHES_TO', 'CONSUMES_FROM') AS fan_in,
       outdegree(t, 'CALLS', 'READS_FROM', 'PUBLISHES_TO', 'CONSUMES_FROM') AS fan_out
ORDER BY name
LIMIT $limit
