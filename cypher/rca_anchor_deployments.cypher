// Read path, anchor fallback: Deployments named like the alert's labels, and their Service
// (as the graph held them at $at; null: now).
MATCH (d:Deployment)
WHERE d.name IN $names AND <<existed_at:d>>
OPTIONAL MATCH (s:Service)-[r:DEPLOYED_AS]->(d)
WHERE <<existed_at:s>> AND <<existed_at:r>>
RETURN d.name AS deployment, d.namespace AS namespace, s.name AS service
LIMIT $limit
