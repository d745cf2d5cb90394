// Episodes that MENTION the seed entities; score = sum of the seeds' proximity weights,
// kept only when at least $min_score (nearness alone is not likeness).
UNWIND $seeds AS sd
MATCH (ent:MemoryEntity {entity_type: sd.type, entity_ref: sd.ref})<-[:MENTIONS]-(e:MemoryEpisode)
WHERE <<memory_filter:e>>
WITH e, sum(sd.w) AS score, collect(ent.entity_type + ':' + ent.entity_ref) AS shared
WHERE score >= $min_score
RETURN e.incident_fingerprint AS fp, e.version AS version, score, shared
ORDER BY score DESC, fp
LIMIT $limit
