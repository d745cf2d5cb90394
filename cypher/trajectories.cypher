// Trajectories opened since $since, oldest first (what evolution learns from).
MATCH (t:Trajectory)
WHERE t.opened_at >= $since
RETURN t.trajectory_json AS trajectory
ORDER BY t.opened_at, t.fingerprint
LIMIT $limit
