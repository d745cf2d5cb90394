// Was <<var>> part of the graph at $at (epoch seconds)? $at null means now: no filter.
// first_seen is set on create; stale_at / revived_at list every Stale / back-to-Active
// transition, so a fact that went Stale and came back is visible in each active span.
// A fact marked Stale before stale_at was recorded counts as stale from its last_scan.
$at IS NULL OR (
  <<var>>.first_seen <= $at
  AND size([t IN coalesce(<<var>>.stale_at, []) WHERE t <= $at])
      = size([t IN coalesce(<<var>>.revived_at, []) WHERE t <= $at])
  AND NOT (<<var>>.status = 'Stale' AND <<var>>.stale_at IS NULL AND <<var>>.last_scan <= $at)
)
