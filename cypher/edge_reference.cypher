// Edges without properties only assert that the relationship exists (e.g. a catalog's
// `calls:`): created if missing, otherwise only seen again, leaving the provenance and
// statistics of a lane that measured it (Tempo) in place.
UNWIND $rows AS r
WITH r, r[5] AS ia, r[6] AS ib
MATCH (a) WHERE id(a) = ia
MATCH (b) WHERE id(b) = ib
MERGE (a)-[e:<<type>><<edge_key>>]->(b)
ON CREATE SET e.source = r[2], e.status = r[3], e.confidence = r[4], e.first_seen = $now
SET e.last_seen = $now,
    e.last_scan = $now,
    e.sources = CASE WHEN r[2] IN coalesce(e.sources, []) THEN e.sources
        ELSE coalesce(e.sources, []) + [r[2]] END
RETURN count(e) AS written, sum(CASE WHEN e.first_seen = $now THEN 1 ELSE 0 END) AS created
