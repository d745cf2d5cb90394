// Did <<var>> exist in the graph at $at (epoch seconds)? $at null means now: no filter.
// Unlike visible_at it keeps facts that were Stale then: the read path weighs a Stale
// edge at half rather than dropping it, live or in the past (status_at says which).
$at IS NULL OR <<var>>.first_seen <= $at
