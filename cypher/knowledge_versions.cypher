// Every knowledge version, newest first, with what made it.
MATCH (v:KnowledgeVersion)
OPTIONAL MATCH (k:Knowledge {name: $name})
RETURN v.version AS version, v.parent AS parent, v.note AS note, v.digest AS digest,
       v.items AS items, v.first_seen AS created, k.version = v.version AS live
ORDER BY version DESC
LIMIT 200
