CALL db.indexes() YIELD label, properties, types, status
RETURN label, properties, types, status
