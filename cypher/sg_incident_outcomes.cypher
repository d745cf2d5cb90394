// An incident's hypotheses, their evidence and what it was root-caused by (read-back).
MATCH (i:Incident {fingerprint: $fingerprint})
OPTIONAL MATCH (i)-[:EVALUATED_AS]->(h:Hypothesis)
OPTIONAL MATCH (h)-[ev:EVIDENCED_BY]->()
RETURN properties(i) AS incident, h.suspect_ref AS suspect_ref, h.state AS state,
       h.rank AS rank, collect(properties(ev)) AS evidence
ORDER BY rank
LIMIT $limit
