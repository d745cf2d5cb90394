// Paths of the CodeUnit nodes of one repository, to link changes to them.
MATCH (c:CodeUnit {repo: $repo})
RETURN c.path AS path
LIMIT 500000
