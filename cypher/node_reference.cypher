// Records without properties only assert that a node exists (a lane naming an endpoint it
// saw): created with the lane's provenance if missing, otherwise only seen again — they
// never overwrite the provenance a lane that describes the node has set.
UNWIND $rows AS r
MERGE (n:<<label>> {<<key>>})
ON CREATE SET n.source = r[2], n.status = r[3], n.confidence = r[4], n.first_seen = $now
SET n.last_seen = $now,
    n.last_scan = $now,
    n.sources = CASE WHEN r[2] IN coalesce(n.sources, []) THEN n.sources
        ELSE coalesce(n.sources, []) + [r[2]] END
RETURN sum(CASE WHEN n.first_seen = $now THEN 1 ELSE 0 END) AS created, count(n) AS written,
    collect([r[0], id(n)]) AS ids
