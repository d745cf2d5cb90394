// The fields a hit shows, for the fused top results.
UNWIND $ids AS i
MATCH (e:MemoryEpisode {incident_fingerprint: i.fp, version: i.version})
RETURN e.incident_fingerprint AS fp, e.version AS version, e.service AS service,
       e.alert AS alert, e.symptom AS symptom, e.root_cause AS root_cause,
       e.resolution AS resolution, e.t_valid AS t_valid, e.t_invalid AS t_invalid,
       e.ingested_at AS ingested_at, e.expired_at AS expired_at
