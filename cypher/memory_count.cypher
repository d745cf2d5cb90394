// Versions are only ever added, so the count says whether the BM25 index is current.
MATCH (e:MemoryEpisode)
RETURN count(e) AS n
