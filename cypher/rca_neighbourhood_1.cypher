// Read path, one round trip: the anchor's downstream paths within 1 hop(s) (kind 'path',
// at most $limit) and its direct callers (kind 'caller', at most $callers). One template
// per hop count (the clamped set 1..4). Each row carries one edge and its far node as
// scalars (every edge in reach is the last edge of some path); scalars, not maps or
// whole nodes, keep client-side decoding cheap. At $at (null: now) only nodes and edges
// that existed then, with their statuses then (a Stale-then edge still counts, at half).
// fan_in / fan_out count dependency edges only (CALLS, READS_FROM, PUBLISHES_TO,
// CONSUMES_FROM): RCA outcomes (FIRED_ON, AFFECTS, EVIDENCED_BY, ROOT_CAUSED_BY...)
// and structure (DEPLOYED, IMPLEMENTS, ...) must not raise a node's topology score.
MATCH (s:Service {name: $anchor})
WHERE <<existed_at:s>>
MATCH p = (s)-[:CALLS|READS_FROM*1..1]->(t)
WHERE t <> s
  AND ($at IS NULL OR (all(x IN nodes(p) WHERE <<existed_at:x>>)
                       AND all(y IN relationships(p) WHERE <<existed_at:y>>)))
WITH p, t, last(relationships(p)) AS e
RETURN 'path' AS kind, [x IN nodes(p) | coalesce(x.name, x.path)] AS names, type(e) AS type,
       e.trace_count AS trace_count, e.error_rate AS error_rate,
       e.latency_p95_ms AS latency_p95_ms, e.source AS e_source,
       <<status_at:e>> AS e_status, e.last_seen AS e_last_seen, labels(t)[0] AS label,
       t.criticality AS criticality, t.source AS source, <<status_at:t>> AS status,
       t.last_seen AS last_seen,
       indegree(t, 'CALLS', 'READS_FROM', 'PUBLISHES_TO', 'CONSUMES_FROM') AS fan_in,
       outdegree(t, 'CALLS', 'READS_FROM', 'PUBLISHES_TO', 'CONSUMES_FROM') AS fan_out
LIMIT $limit
UNION ALL
MATCH (c)-[e:CALLS]->(s:Service {name: $anchor})
WHERE c <> s AND <<existed_at:c>> AND <<existed_at:e>>
RETURN 'caller' AS kind, [s.name, coalesce(c.name, c.path)] AS names, type(e) AS type,
       e.trace_count AS trace_count, e.error_rate AS error_rate,
       e.latency_p95_ms AS latency_p95_ms, e.source AS e_source,
       <<status_at:e>> AS e_status, e.last_seen AS e_last_seen, labels(c)[0] AS label,
       c.criticality AS criticality, c.source AS source, <<status_at:c>> AS status,
       c.last_seen AS last_seen,
       indegree(c, 'CALLS', 'READS_FROM', 'PUBLISHES_TO', 'CONSUMES_FROM') AS fan_in,
       outdegree(c, 'CALLS', 'READS_FROM', 'PUBLISHES_TO', 'CONSUMES_FROM') AS fan_out
LIMIT $callers
