// Full-text (stemmed, TF-IDF) over episode text; $q is built from word tokens only.
CALL db.idx.fulltext.queryNodes('MemoryEpisode', $q) YIELD node, score
WITH node AS e, score
WHERE <<memory_filter:e>>
RETURN e.incident_fingerprint AS fp, e.version AS version, score
ORDER BY score DESC
LIMIT $limit
