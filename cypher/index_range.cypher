CREATE INDEX FOR (n:<<label>>) ON (n.<<prop>>)
