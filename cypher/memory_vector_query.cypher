// Raw nearest neighbours over every version (HNSW); filtered afterwards by memory_pick.
CALL db.idx.vector.queryNodes('MemoryEpisode', 'embedding', $k, vecf32($vector))
YIELD node, score
RETURN node.incident_fingerprint AS fp, node.version AS version, 1.0 - score AS similarity
