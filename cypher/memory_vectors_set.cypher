// Writer-side: attach embeddings (already checked for dimension and finiteness).
UNWIND $rows AS r
MATCH (e:MemoryEpisode {incident_fingerprint: r.fp, version: r.version})
SET e.embedding = vecf32(r.v), e.embedding_model = $model
RETURN count(e) AS n
