MATCH ()-[e:<<type>>]->()
RETURN count(e) AS n
