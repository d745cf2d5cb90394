// Which topology label (Service, Datastore, ExternalApi) carries this name? (feedback)
MATCH (n {name: $name})
WHERE n:Service OR n:Datastore OR n:ExternalApi
RETURN labels(n)[0] AS label
LIMIT 1
