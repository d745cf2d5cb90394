// Close one episode version on the transaction-time axis, with its outgoing memory edges.
// Nothing is deleted: the version stays, readable with known_at before $now.
MATCH (e:MemoryEpisode {incident_fingerprint: $fp, version: $version})
WHERE e.expired_at IS NULL
SET e.expired_at = $now
WITH e
OPTIONAL MATCH (e)-[m:MENTIONS|RESOLVED_BY]->()
WHERE m.expired_at IS NULL
SET m.expired_at = $now
RETURN count(DISTINCT e) AS n
