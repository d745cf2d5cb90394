// The MemoryEpisode vector index, if any: its dimension is pinned in its options.
CALL db.indexes() YIELD label, properties, types, options, status
WHERE label = 'MemoryEpisode'
RETURN properties, types, options, status
