-- Incident records and their jobs, changed atomically (stackgraph/api/incident_store.py).
--
-- KEYS[1] job stream, KEYS[2] index (zset id -> received_at), KEYS[3] correlation window
-- (zset id -> received_at of incidents whose plan is known)
-- ARGV[1] op, ARGV[2] key prefix ("stackgraph:<graph>:"), then the op's arguments.
--
-- A record is a hash `<prefix>incident:<id>` with `:alerts` (hash alert fingerprint ->
-- alert JSON) and `:firing` (set of firing alert fingerprints) beside it;
-- `<prefix>alert:<fp>` names the incident an alert belongs to, `<prefix>open:<symptom>`
-- the open incident of a symptom service inside the correlation window.
local stream, index, win = KEYS[1], KEYS[2], KEYS[3]
local op, prefix = ARGV[1], ARGV[2]

local function inc(id) return prefix .. 'incident:' .. id end
local function alert_key(fp) return prefix .. 'alert:' .. fp end
local function open_key(symptom) return prefix .. 'open:' .. symptom end

-- Something the graph should learn changed: a finished incident gets one write job
-- (coalesced by `write_pending`); an unfinished one is written when it finishes.
local function touch(id)
  local k = inc(id)
  redis.call('HINCRBY', k, 'rev', 1)
  local state = redis.call('HGET', k, 'state')
  if (state == 'done' or state == 'failed') and redis.call('HSETNX', k, 'write_pending', '1') == 1 then
    redis.call('XADD', stream, '*', 'kind', 'write', 'incident', id)
  end
end

local function takes_alerts(id)
  local f = redis.call('HMGET', inc(id), 'status', 'state')
  return f[1] == 'open' or f[2] == 'queued' or f[2] == 'investigating'
end

-- The incident a firing alert joins by its fingerprint (the one it is in, or the one
-- named after it): open, or not investigated yet.
local function current(fp)
  local id = redis.call('GET', alert_key(fp))
  if id and takes_alerts(id) then return id end
  if takes_alerts(fp) then return fp end
  return nil
end

local function open_for(it, window)
  if window <= 0 or it.adhoc == '1' or it.symptom == 'unknown' then return nil end
  local id = redis.call('GET', open_key(it.symptom))
  if id and redis.call('HGET', inc(id), 'status') == 'open' then return id end
  return nil
end

local function join(id, it, retention)
  local k = inc(id)
  redis.call('HINCRBY', k, 'alerts_seen', 1)
  local new = redis.call('HSET', k .. ':alerts', it.fp, it.doc)
  redis.call('SADD', k .. ':firing', it.fp)
  redis.call('SET', alert_key(it.fp), id, 'EX', retention)
  if redis.call('HGET', k, 'status') ~= 'open' then
    redis.call('HSET', k, 'status', 'open')
    redis.call('HDEL', k, 'resolved_at')
    new = 1
  end
  if new == 1 then touch(id) end
end

local function start(it, now, window, retention)
  local id = it.fp
  local k = inc(id)
  redis.call('DEL', k, k .. ':alerts', k .. ':firing')
  redis.call('HSET', k, 'id', id, 'alert', it.doc, 'symptom', it.symptom,
    'opened_at', it.opened_at, 'received_at', now, 'shadow', it.shadow, 'adhoc', it.adhoc,
    'status', 'open', 'state', 'queued', 'alerts_seen', 1, 'rev', 0, 'feedback', 'pending',
    'investigations', 0)
  if it.plan ~= '' then redis.call('HSET', k, 'plan', it.plan) end
  redis.call('HSET', k .. ':alerts', it.fp, it.doc)
  redis.call('SADD', k .. ':firing', it.fp)
  redis.call('SET', alert_key(it.fp), id, 'EX', retention)
  redis.call('ZADD', index, now, id)
  if window > 0 and it.adhoc ~= '1' and it.symptom ~= 'unknown' then
    redis.call('SET', open_key(it.symptom), id, 'PX', math.floor(window * 1000))
  end
  redis.call('XADD', stream, '*', 'kind', 'investigate', 'incident', id)
end

local function resolve(it, now)
  local id = redis.call('GET', alert_key(it.fp))
  if not id or redis.call('EXISTS', inc(id)) == 0 then return nil end
  local k = inc(id)
  redis.call('SREM', k .. ':firing', it.fp)
  if redis.call('HEXISTS', k .. ':alerts', it.fp) == 1 then
    redis.call('HSET', k .. ':alerts', it.fp, it.doc)
  end
  if redis.call('SCARD', k .. ':firing') == 0 and redis.call('HGET', k, 'status') == 'open' then
    redis.call('HSET', k, 'status', 'resolved', 'resolved_at', now)
    touch(id)
    return id
  end
  return nil
end

-- One webhook: every alert is recorded, or none is (the queue is full and one of them
-- would start an investigation). A payload larger than the room left is still taken
-- whole when the backlog is below the bound, so no payload is refused forever.
local function intake()
  local now, window = ARGV[3], tonumber(ARGV[4])
  local retention, size = tonumber(ARGV[5]), tonumber(ARGV[6])
  local items = cjson.decode(ARGV[7])
  local starts = false
  for _, it in ipairs(items) do
    if it.status == 'firing' and not current(it.fp) and not open_for(it, window) then
      starts = true
      break
    end
  end
  local backlog = redis.call('XLEN', stream)
  if starts and backlog >= size then
    return cjson.encode({full = true, backlog = backlog})
  end
  local started, joined, closed = {}, {}, {}
  for _, it in ipairs(items) do
    if it.status == 'firing' then
      local id = current(it.fp) or open_for(it, window)
      if id then
        join(id, it, retention)
        table.insert(joined, it.fp)
      else
        start(it, now, window, retention)
        table.insert(started, it.fp)
      end
    else
      local id = resolve(it, now)
      if id then table.insert(closed, id) end
    end
  end
  return cjson.encode({started = started, joined = joined, closed = closed,
    backlog = redis.call('XLEN', stream)})
end

local function contains(list, x)
  for _, v in ipairs(list) do if v == x then return true end end
  return false
end

-- `src` joins `dst`: its alerts, firing set, count and symptom key move over.
local function merge(src, dst, reason)
  local s, d = inc(src), inc(dst)
  local alerts = redis.call('HGETALL', s .. ':alerts')
  for i = 1, #alerts, 2 do
    redis.call('HSET', d .. ':alerts', alerts[i], alerts[i + 1])
    redis.call('SET', alert_key(alerts[i]), dst, 'KEEPTTL')
  end
  for _, fp in ipairs(redis.call('SMEMBERS', s .. ':firing')) do
    redis.call('SADD', d .. ':firing', fp)
  end
  redis.call('HINCRBY', d, 'alerts_seen', tonumber(redis.call('HGET', s, 'alerts_seen') or '0'))
  local symptom = redis.call('HGET', s, 'symptom')
  if redis.call('GET', open_key(symptom)) == src then
    redis.call('SET', open_key(symptom), dst, 'KEEPTTL')
  end
  local seen = cjson.decode(redis.call('HGET', d, 'correlated') or '[]')
  table.insert(seen, {incident = src, symptom = symptom, reason = reason, alerts = #alerts / 2})
  redis.call('HSET', d, 'correlated', cjson.encode(seen))
  redis.call('DEL', s, s .. ':alerts', s .. ':firing')
  redis.call('ZREM', index, src)
  redis.call('ZREM', win, src)
  touch(dst)
end

-- A planned incident joins an open one of the window whose plan shares its top candidate,
-- or whose path to its top candidate holds this one's anchor (or the other way round);
-- otherwise it enters the window itself. Returns the incident that goes on.
local function correlate()
  local now, window, id = tonumber(ARGV[3]), tonumber(ARGV[4]), ARGV[5]
  local top, path_json, anchor = ARGV[6], ARGV[7], ARGV[8]
  local path = cjson.decode(path_json)
  local k = inc(id)
  if redis.call('EXISTS', k) == 0 then return '' end
  redis.call('ZREMRANGEBYSCORE', win, '-inf', now - window)
  for _, other in ipairs(redis.call('ZRANGE', win, 0, -1)) do
    if other ~= id then
      local o = redis.call('HMGET', inc(other), 'status', 'top', 'path', 'anchor')
      if o[1] == 'open' then
        local opath = cjson.decode(o[3] or '[]')
        local reason = nil
        if top ~= '' and o[2] == top then
          reason = 'same top candidate ' .. top
        elseif anchor ~= '' and contains(opath, anchor) then
          reason = anchor .. ' lies on the path ' .. table.concat(opath, ' -> ')
        elseif o[4] and o[4] ~= '' and contains(path, o[4]) then
          reason = o[4] .. ' lies on the path ' .. table.concat(path, ' -> ')
        end
        if reason then
          merge(id, other, reason)
          return other
        end
      else
        redis.call('ZREM', win, other)
      end
    end
  end
  redis.call('HSET', k, 'top', top, 'path', path_json, 'anchor', anchor)
  redis.call('ZADD', win, redis.call('HGET', k, 'received_at') or now, id)
  return id
end

-- Fields of an existing record (a merged or trimmed one is not brought back).
local function set()
  local k = inc(ARGV[3])
  if redis.call('EXISTS', k) == 0 then return 0 end
  for i = 4, #ARGV, 2 do redis.call('HSET', k, ARGV[i], ARGV[i + 1]) end
  return 1
end

-- The investigation is over: its state and fields, and one write job if the record
-- changed (revision) while it ran.
local function finish()
  local id, rev = ARGV[3], ARGV[4]
  local k = inc(id)
  if redis.call('EXISTS', k) == 0 then return 0 end
  for i = 5, #ARGV, 2 do redis.call('HSET', k, ARGV[i], ARGV[i + 1]) end
  if redis.call('HGET', k, 'rev') ~= rev and redis.call('HSETNX', k, 'write_pending', '1') == 1 then
    redis.call('XADD', stream, '*', 'kind', 'write', 'incident', id)
  end
  return 1
end

if op == 'intake' then return intake()
elseif op == 'correlate' then return correlate()
elseif op == 'set' then return set()
elseif op == 'finish' then return finish()
end
return redis.error_reply('unknown op ' .. tostring(op))
