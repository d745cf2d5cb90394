// Every episode version's text, for the in-process BM25 index (texts never change).
MATCH (e:MemoryEpisode)
RETURN e.incident_fingerprint AS fp, e.version AS version, e.text AS text
