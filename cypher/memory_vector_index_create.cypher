// HNSW over episode embeddings; score from queryNodes is cosine distance.
CREATE VECTOR INDEX FOR (e:MemoryEpisode) ON (e.embedding)
OPTIONS {dimension: $dim, similarityFunction: 'cosine'}
