// Nodes of one label as the graph held them at $at (null: now). See frag_visible_at.
MATCH (n:<<label>>)
WHERE <<visible_at:n>>
RETURN properties(n) AS p
ORDER BY id(n)
LIMIT $limit
