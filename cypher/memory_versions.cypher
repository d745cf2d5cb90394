// Every version of one incident, oldest first (history, supersede).
MATCH (e:MemoryEpisode {incident_fingerprint: $fp})
OPTIONAL MATCH (e)-[m:MENTIONS]->(ent:MemoryEntity)
OPTIONAL MATCH (e)-[s:SUPERSEDES]->(old:MemoryEpisode)
RETURN e.version AS version, e.service AS service, e.alert AS alert, e.symptom AS symptom,
       e.root_cause AS root_cause, e.resolution AS resolution, e.evidence AS evidence,
       e.text AS text, e.t_valid AS t_valid, e.t_invalid AS t_invalid,
       e.ingested_at AS ingested_at, e.expired_at AS expired_at, e.body_hash AS body_hash,
       e.resolved_by AS resolved_by,
       collect(DISTINCT ent.entity_type + ':' + ent.entity_ref) AS entities,
       collect(DISTINCT {version: old.version, kind: s.kind, reason: s.reason}) AS supersedes
ORDER BY version
