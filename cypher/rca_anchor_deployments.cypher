// Read path, anchor fallback: Deployments named like the alert's labels, and their Service.
MATCH (d:Deployment)
WHERE d.name IN $names
OPTIONAL MATCH (s:Service)-[:DEPLOYED_AS]->(d)
RETURN d.name AS deployment, d.namespace AS namespace, s.name AS service
LIMIT $limit
