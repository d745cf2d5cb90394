// Breadth-first from the alert's service over topology, up to two hops (fixed, clamped).
MATCH p = (s:Service {name: $service})-[:CALLS|READS_FROM|PUBLISHES_TO|CONSUMES_FROM*1..2]-(n)
WHERE n <> s AND (n:Service OR n:Datastore OR n:ExternalApi OR n:NatsSubject)
RETURN labels(n)[0] AS label, coalesce(n.name, n.subject) AS name, min(length(p)) AS hops
