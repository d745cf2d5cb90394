CREATE FULLTEXT INDEX FOR (n:<<label>>) ON (n.<<prop>>)
