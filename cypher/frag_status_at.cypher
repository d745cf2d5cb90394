// The status <<var>> had at $at (null: its status now). Stale when it had gone stale
// more often than it had come back by then (stale_at / revived_at, as in visible_at); a
// fact made Stale before stale_at was recorded counts as stale from its last_scan; a fact
// Stale now but not then was Active. Other statuses (Candidate, Deprecated) are the latest.
CASE
  WHEN $at IS NULL THEN <<var>>.status
  WHEN size([st IN coalesce(<<var>>.stale_at, []) WHERE st <= $at])
       > size([rv IN coalesce(<<var>>.revived_at, []) WHERE rv <= $at]) THEN 'Stale'
  WHEN <<var>>.status = 'Stale' AND <<var>>.stale_at IS NULL AND <<var>>.last_scan <= $at
       THEN 'Stale'
  WHEN <<var>>.status = 'Stale' THEN 'Active'
  ELSE <<var>>.status
END
