// Read path: the anchor's direct callers (one hop upstream), with the calling edge, as
// the graph held them at $at (null: now; statuses then, so a Stale-then edge counts half).
MATCH (c)-[e:CALLS]->(s:Service {name: $anchor})
WHERE c <> s AND <<existed_at:c>> AND <<existed_at:e>>
RETURN c.name AS name, type(e) AS type, e.trace_count AS trace_count,
       e.error_rate AS error_rate, e.latency_p95_ms AS latency_p95_ms, e.source AS e_source,
       <<status_at:e>> AS e_status, e.last_seen AS e_last_seen, labels(c)[0] AS label,
       c.criticality AS criticality, c.source AS source, <<status_at:c>> AS status,
       c.last_seen AS last_seen, indegree(c) AS fan_in, outdegree(c) AS fan_out
LIMIT $limit
