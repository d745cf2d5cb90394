// Which MemoryEpisode versions answer a question, on both time axes and the filters.
// Transaction time: recorded by $known_at and not yet expired then.
// Event time: true in the world at $as_of. Both default to now (bound by the caller).
<<var>>.ingested_at <= $known_at
AND coalesce(<<var>>.expired_at, 1.0e18) > $known_at
AND <<var>>.t_valid <= $as_of
AND coalesce(<<var>>.t_invalid, 1.0e18) > $as_of
AND ($service IS NULL OR <<var>>.service = $service)
AND ($since IS NULL OR <<var>>.t_valid >= $since)
AND ($until IS NULL OR <<var>>.t_valid <= $until)
