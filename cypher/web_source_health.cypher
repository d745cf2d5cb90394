// Web UI, graph health: per source (provenance), its nodes and edges, when a lane last
// scanned them and how many are Stale. Whole-graph scans: for the health page, not a hot path.
MATCH (n) WHERE n.source IS NOT NULL
RETURN 'node' AS kind, n.source AS source, count(n) AS n, max(n.last_scan) AS last_scan,
       sum(CASE WHEN n.status = 'Stale' THEN 1 ELSE 0 END) AS stale
UNION ALL
MATCH ()-[e]->() WHERE e.source IS NOT NULL
RETURN 'edge' AS kind, e.source AS source, count(e) AS n, max(e.last_scan) AS last_scan,
       sum(CASE WHEN e.status = 'Stale' THEN 1 ELSE 0 END) AS stale
