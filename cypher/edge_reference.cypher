// Edges without properties only assert that the relationship exists (e.g. a catalog's
// `calls:`): created if missing, otherwise only seen again, leaving the provenance and
// statistics of a lane that measured it (Tempo) in place.
UNWIND $rows AS r
MATCH (a:<<src_label>> {<<src_key>>})
MATCH (b:<<dst_label>> {<<dst_key>>})
MERGE (a)-[e:<<type>><<edge_key>>]->(b)
ON CREATE SET e.source = r.s, e.status = r.st, e.confidence = r.c, e.first_seen = $now
SET e.last_seen = $now,
    e.last_scan = $now,
    e.sources = CASE WHEN r.s IN coalesce(e.sources, []) THEN e.sources
        ELSE coalesce(e.sources, []) + [r.s] END
RETURN count(e) AS written, sum(CASE WHEN e.first_seen = $now THEN 1 ELSE 0 END) AS created
