// One episode's embedding model, to refuse a different embedder at start-up.
MATCH (e:MemoryEpisode) WHERE e.embedding_model IS NOT NULL
RETURN e.embedding_model AS model, count(e) AS n
