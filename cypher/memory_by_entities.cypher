// Graph proximity. Candidates: episodes that MENTION an entity the question names
// ($strong). Score: the summed weights ($weights, "type:ref" -> w) of every seed entity a
// candidate mentions (its service, neighbours, alert too); kept when >= $min_score.
// Starting from the indexed entities keeps the planner off a scan of all episodes;
// at most $cap candidates (most shared, then most recent) are scored.
UNWIND $strong AS sd
MATCH (ent:MemoryEntity {entity_type: sd.type, entity_ref: sd.ref})
WITH ent, sd.w AS sw
MATCH (ent)<-[:MENTIONS]-(e:MemoryEpisode)
WHERE <<memory_filter:e>>
WITH e, sum(sw) AS first
ORDER BY first DESC, e.t_valid DESC
LIMIT $cap
MATCH (e)-[:MENTIONS]->(x:MemoryEntity)
WITH e, x.entity_type + ':' + x.entity_ref AS k
WITH e, k, $weights[k] AS w
WHERE w IS NOT NULL
WITH e, sum(w) AS score, collect(k) AS shared
WHERE score >= $min_score
RETURN e.incident_fingerprint AS fp, e.version AS version, score, shared
ORDER BY score DESC, fp
LIMIT $limit
