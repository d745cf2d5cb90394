// graph → code: a service's CodeUnits with what each defines or uses.
MATCH (c:CodeUnit)-[:IMPLEMENTS]->(s:Service {name: $service})
OPTIONAL MATCH (e:Endpoint)-[:DEFINED_IN]->(c)
WITH c, collect(DISTINCT e.method + ' ' + e.route) AS endpoints
OPTIONAL MATCH (c)-[:PUBLISHES_TO]->(p:NatsSubject)
WITH c, endpoints, collect(DISTINCT p.subject) AS publishes
OPTIONAL MATCH (c)-[:CONSUMES_FROM]->(q:NatsSubject)
WITH c, endpoints, publishes, collect(DISTINCT q.subject) AS consumes
OPTIONAL MATCH (c)-[:CALLS]->(t:Service)
WITH c, endpoints, publishes, consumes, collect(DISTINCT t.name) AS calls
OPTIONAL MATCH (c)-[:READS_FROM]->(d:Datastore)
RETURN c.repo AS repo, c.path AS path, c.url AS url, c.status AS status, endpoints,
       publishes, consumes, calls, collect(DISTINCT d.name) AS reads_from
ORDER BY path
LIMIT $limit
