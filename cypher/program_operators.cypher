// The synthesised operators the program library admitted (E4 stage 3), with their use.
MATCH (o:Operator)
RETURN o.name AS name, o.status AS status, o.uses AS uses, o.digest AS digest,
       o.admitted_at AS admitted_at, o.evicted_at AS evicted_at
ORDER BY name
LIMIT 100
