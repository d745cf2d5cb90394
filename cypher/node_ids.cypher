// The internal ids of nodes named by natural key (rows: [i, key...]), so edge rows find
// their endpoints by id (a seek) instead of by index once per edge.
UNWIND $rows AS r
MATCH (n:<<label>> {<<key>>})
RETURN collect([r[0], id(n)]) AS ids
