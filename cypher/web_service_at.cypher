// Web UI, service page: did the graph hold this Service at $at (null: now)?
MATCH (s:Service {name: $name})
WHERE <<visible_at:s>>
RETURN s.name AS name
LIMIT 1
