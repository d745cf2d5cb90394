// The live knowledge version and its items (layered knowledge, OpsHarness).
MATCH (k:Knowledge {name: $name})
MATCH (v:KnowledgeVersion {version: k.version})
RETURN v.knowledge_json AS knowledge
LIMIT 1
