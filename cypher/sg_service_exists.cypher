// Does a Service with this name exist? (write-back decides whether to add a placeholder.)
MATCH (s:Service {name: $name})
RETURN s.name AS name
LIMIT 1
