MATCH (n:<<label>>)
WHERE id(n) > $after
RETURN id(n) AS id, properties(n) AS p
ORDER BY id(n)
LIMIT $limit
