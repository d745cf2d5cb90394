// Read path, anchor: which of the candidate names are Services (at $at; null: now).
// fan_in / fan_out count dependency edges only (as in rca_neighbourhood_*): RCA outcomes
// written back (FIRED_ON, AFFECTS, ROOT_CAUSED_BY, ...) must not raise the topology score.
MATCH (s:Service)
WHERE s.name IN $names AND <<existed_at:s>>
RETURN s.name AS name, s.criticality AS criticality, s.source AS source,
       <<status_at:s>> AS status, s.last_seen AS last_seen,
       indegree(s, 'CALLS', 'READS_FROM', 'PUBLISHES_TO', 'CONSUMES_FROM') AS fan_in,
       outdegree(s, 'CALLS', 'READS_FROM', 'PUBLISHES_TO', 'CONSUMES_FROM') AS fan_out
LIMIT $limit
