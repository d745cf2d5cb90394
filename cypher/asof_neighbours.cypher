// A service's direct neighbours and the edges to them, as the graph held them at $at.
MATCH (s:Service {name: $service})-[e]-(n)
WHERE <<visible_at:s>> AND <<visible_at:e>> AND <<visible_at:n>>
RETURN type(e) AS type, labels(n)[0] AS label, coalesce(n.name, n.subject, n.fingerprint) AS name
ORDER BY type, label, name
LIMIT $limit
