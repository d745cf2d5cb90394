// Changes whose commit sha starts with one of the given (short or full) shas.
UNWIND $shas AS s
MATCH (c:Change)
WHERE c.commit_sha STARTS WITH s
RETURN s AS ref, c.repo AS repo, c.commit_sha AS sha
LIMIT 10000
