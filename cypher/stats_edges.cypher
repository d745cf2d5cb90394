MATCH ()-[e]->()
RETURN type(e) AS type, count(e) AS n
