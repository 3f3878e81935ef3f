// A job's move to BullMQ's wait list as BullMQ's own scripts do it for a job of this store (no
// priority, no parent), for the scripts that move a job there in one atomic step with writes of
// their own (retry-failed.ts, user-order.ts): the `wait` list, the `marker` sorted set that wakes
// blocked workers (unless the queue is paused or at its global concurrency, read from `meta` and
// the `active` list), and a `waiting` event on the `events` stream, trimmed as BullMQ trims it.

/** Lua: `toWait(wait, push, meta, active, marker, events, jobId, prev)`; `push`: LPUSH or RPUSH. */
export const TO_WAIT = `
local function toWait(wait, push, meta, active, marker, events, jobId, prev)
  redis.call(push, wait, jobId)
  local fields = redis.call('HMGET', meta, 'paused', 'concurrency', 'opts.maxLenEvents')
  local held = fields[1] ~= false
  if not held and fields[2] then held = redis.call('LLEN', active) >= tonumber(fields[2]) end
  if not held then redis.call('ZADD', marker, 0, '0') end
  redis.call('XADD', events, 'MAXLEN', '~', fields[3] or 10000, '*',
    'event', 'waiting', 'jobId', jobId, 'prev', prev)
end`;
