// One knowledge version by number.
MATCH (v:KnowledgeVersion {version: $version})
RETURN v.knowledge_json AS knowledge
LIMIT 1
