// Does a Service with this name exist? (write-back links an incident only to a known one.)
MATCH (s:Service {name: $name})
RETURN s.name AS name
LIMIT 1
