// Read path: the other services of the anchor's namespace (every service where it names
// none), for an anchor the graph links to nothing: without a call known in or out of it,
// the graph cannot say what the alert depends on. At $at (null: now) only nodes that
// existed then. At most $limit, in name order. The namespace is a range-indexed property
// and degrees are counted after the limit, so a namespace of thousands reads its first
// $limit, not all of them.
MATCH (s:Service {name: $anchor})
WHERE <<existed_at:s>> AND s.namespace IS NOT NULL
WITH s, s.namespace AS ns
MATCH (t:Service)
WHERE t.namespace = ns AND t <> s AND <<existed_at:t>>
WITH s, t ORDER BY t.name LIMIT $limit
RETURN s.namespace AS namespace, t.name AS name, labels(t)[0] AS label,
       t.criticality AS criticality, t.source AS source, <<status_at:t>> AS status,
       t.last_seen AS last_seen,
       indegree(t, 'CALLS', 'READS_FROM', 'PUBLISHES_TO', 'CONSUMES_FROM') AS fan_in,
       outdegree(t, 'CALLS', 'READS_FROM', 'PUBLISHES_TO', 'CONSUMES_FROM') AS fan_out
UNION
MATCH (s:Service {name: $anchor})
WHERE <<existed_at:s>> AND s.namespace IS NULL
MATCH (t:Service)
WHERE t <> s AND <<existed_at:t>>
WITH s, t ORDER BY t.name LIMIT $limit
RETURN s.namespace AS namespace, t.name AS name, labels(t)[0] AS label,
       t.criticality AS criticality, t.source AS source, <<status_at:t>> AS status,
       t.last_seen AS last_seen,
       indegree(t, 'CALLS', 'READS_FROM', 'PUBLISHES_TO', 'CONSUMES_FROM') AS fan_in,
       outdegree(t, 'CALLS', 'READS_FROM', 'PUBLISHES_TO', 'CONSUMES_FROM') AS fan_out
