// Concluded investigations that feedback labelled, newest first: the evidence's state and
// confidence in the conclusion, and the label (correct: confirmed; partial, wrong: another
// root cause).
// What calibrates the confidence a later incident states (rca.agent.calibration).
MATCH (t:Trajectory)
WHERE t.label IN $labels AND t.evidence_confidence IS NOT NULL
RETURN coalesce(t.evidence_state, '') AS state, t.evidence_confidence AS confidence,
       t.label AS label
ORDER BY t.opened_at DESC
LIMIT $limit
