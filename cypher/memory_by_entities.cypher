// Graph proximity. Candidates: episodes that MENTION an entity the question names
// ($strong). Score: the summed weights ($weights, "type:ref" -> w) of every seed entity a
// candidate mentions (its service, neighbours, alert too); kept when >= $min_score.
// Starting from the indexed entities keeps the planner off a scan of all episodes.
UNWIND $strong AS sd
MATCH (ent:MemoryEntity {entity_type: sd.type, entity_ref: sd.ref})
WITH DISTINCT ent
MATCH (ent)<-[:MENTIONS]-(e:MemoryEpisode)
WHERE <<memory_filter:e>>
WITH DISTINCT e
MATCH (e)-[:MENTIONS]->(x:MemoryEntity)
WITH e, x.entity_type + ':' + x.entity_ref AS k
WITH e, k, $weights[k] AS w
WHERE w IS NOT NULL
WITH e, sum(w) AS score, collect(k) AS shared
WHERE score >= $min_score
RETURN e.incident_fingerprint AS fp, e.version AS version, score, shared
ORDER BY score DESC, fp
LIMIT $limit
