// Which of these candidate refs (query words, neighbours) are known memory entities.
UNWIND $refs AS r
MATCH (ent:MemoryEntity {entity_ref: r})
RETURN ent.entity_type AS type, ent.entity_ref AS ref
