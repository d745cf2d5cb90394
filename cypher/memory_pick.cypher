// Keep the (fp, version) pairs that answer the question on both time axes + filters.
UNWIND $ids AS i
MATCH (e:MemoryEpisode {incident_fingerprint: i.fp, version: i.version})
WHERE <<memory_filter:e>>
RETURN e.incident_fingerprint AS fp, e.version AS version, i.score AS score
