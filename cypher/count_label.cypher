MATCH (n:<<label>>)
RETURN count(n) AS n
