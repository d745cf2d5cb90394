// Repairs that paid before on an alert signature, best gain first (repair memory).
MATCH (r:Repair {signature: $signature})
RETURN r.stage AS stage, r.patch AS patch, r.gain AS gain
ORDER BY gain DESC
LIMIT 20
