// Phase 1 of a write of an edge type without a key of its own, rows grouped by source node:
// [source id, [hash, ...], source, status, confidence]. One seek per source and one
// batched traversal of its edges of this type, instead of two seeks and an Expand Into
// per edge (about half the server's time for a touch). An edge's hash names its target
// (`ingest/rows.py`), so an edge is unchanged when its hash for this writer tag
// is one of the group's, and its provenance is the group's.
UNWIND $rows AS g
WITH g, g[0] AS ia
MATCH (a) WHERE id(a) = ia
MATCH (a)-[e:<<type>>]->()
WHERE e.<<hash>> IN g[1] AND e.source = g[2] AND e.status = g[3] AND e.confidence = g[4]
SET e.last_seen = $now, e.last_scan = $now
RETURN count(e) AS touched
