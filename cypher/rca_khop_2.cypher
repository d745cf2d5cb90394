// Read path: the anchor's downstream dependency neighbourhood within 2 hop(s), as paths.
// One template per hop count (the clamped set 1..4); LIMIT bounds the paths returned.
// Each path carries its last edge and its end node as scalars (every edge in reach is the
// last edge of some path); scalars, not maps, keep client-side decoding cheap.
// At $at (null: now) only paths whose nodes and edges existed then, with their statuses then.
MATCH (s:Service {name: $anchor})
WHERE <<existed_at:s>>
MATCH p = (s)-[:CALLS|READS_FROM*1..2]->(t)
WHERE t <> s
  AND ($at IS NULL OR (all(x IN nodes(p) WHERE <<existed_at:x>>)
                       AND all(y IN relationships(p) WHERE <<existed_at:y>>)))
WITH p, t, last(relationships(p)) AS e
RETURN [x IN nodes(p) | x.name] AS names, type(e) AS type, e.trace_count AS trace_count,
       e.error_rate AS error_rate, e.latency_p95_ms AS latency_p95_ms, e.source AS e_source,
       <<status_at:e>> AS e_status, e.last_seen AS e_last_seen, labels(t)[0] AS label,
       t.criticality AS criticality, t.source AS source, <<status_at:t>> AS status,
       t.last_seen AS last_seen, indegree(t) AS fan_in, outdegree(t) AS fan_out
LIMIT $limit
