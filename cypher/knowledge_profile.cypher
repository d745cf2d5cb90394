// The system profile (knowledge K1): each service's tier, its datastores, how many call
// it and how much traffic it takes, and which signals its incoming calls carry.
MATCH (s:Service)
OPTIONAL MATCH (s)-[:READS_FROM]->(d:Datastore)
OPTIONAL MATCH ()-[c:CALLS]->(s)
RETURN s.name AS service, s.criticality AS criticality,
       collect(DISTINCT d.name) AS datastores, count(DISTINCT c) AS callers,
       sum(coalesce(c.trace_count, 0)) AS traffic,
       max(CASE WHEN c.error_rate IS NULL THEN 0 ELSE 1 END) AS has_errors,
       max(CASE WHEN c.latency_p95_ms IS NULL THEN 0 ELSE 1 END) AS has_latency
ORDER BY traffic DESC, service
LIMIT $limit
