/**
 * The sketch's update rules as Lua, for Redis: a script runs atomically, so an update is one
 * round trip that no other client's update can interleave with. They are the rules of
 * sketch/count-min.ts over the cells of one Redis string (BITFIELD i32 at #cell), with the
 * same sticky saturation as sketch/counters.ts (a cell at +-(2^31 - 1) stays there, so a later
 * decrement cannot pull it below the truth); the tests feed a Redis sketch and a local one the
 * same stream and compare them cell for cell.
 *
 * KEYS[1] the cells, KEYS[2] the header hash. ARGV[1] the shape ("width:depth:rule:fingerprint",
 * written by the first writer; a writer with another shape gets an error, never a write), ARGV[2]
 * the amount, ARGV[3..] the key's cell per row.
 */

/** Checks or sets the shape; shared by every script. */
const SHAPE_CHECK = `
local shape = redis.call('HGET', KEYS[2], 'shape')
if not shape then
  redis.call('HSET', KEYS[2], 'shape', ARGV[1], 'total', 0)
elseif shape ~= ARGV[1] then
  return redis.error_reply('HOTCOUNT_SHAPE ' .. shape)
end
local SAT = 2147483647
`;

/** The shape check, then the key's cells read into `values`. */
const SHAPE = `${SHAPE_CHECK}
local by = tonumber(ARGV[2])
local reads = {}
for i = 3, #ARGV do
  reads[#reads + 1] = 'GET'; reads[#reads + 1] = 'i32'; reads[#reads + 1] = '#' .. ARGV[i]
end
local values = redis.call('BITFIELD', KEYS[1], unpack(reads))
`;

/** Plain rule: adds `by` (signed) to each cell, saturating and sticky; returns the least. */
export const ADD_SCRIPT = `${SHAPE}
local sets = {}
local least = SAT
for i, value in ipairs(values) do
  local next = value
  if value ~= SAT and value ~= -SAT then
    next = math.max(-SAT, math.min(SAT, value + by))
    sets[#sets + 1] = 'SET'; sets[#sets + 1] = 'i32'; sets[#sets + 1] = '#' .. ARGV[i + 2]
    sets[#sets + 1] = next
  end
  if next < least then least = next end
end
if #sets > 0 then redis.call('BITFIELD', KEYS[1], unpack(sets)) end
redis.call('HINCRBY', KEYS[2], 'total', by)
return least
`;

/**
 * Conservative rule: raises each cell to target = estimate + by (saturating at 2^31 - 1); a
 * cell at -(2^31 - 1) stays there. Returns the target, the key's new estimate.
 */
export const RAISE_SCRIPT = `${SHAPE}
local least = SAT
for _, value in ipairs(values) do
  if value < least then least = value end
end
local target = SAT
if least < SAT - by then target = least + by end
local sets = {}
for i, value in ipairs(values) do
  if value < target and value ~= -SAT then
    sets[#sets + 1] = 'SET'; sets[#sets + 1] = 'i32'; sets[#sets + 1] = '#' .. ARGV[i + 2]
    sets[#sets + 1] = target
  end
end
if #sets > 0 then redis.call('BITFIELD', KEYS[1], unpack(sets)) end
redis.call('HINCRBY', KEYS[2], 'total', by)
return target
`;

/** Checks or sets the shape alone (KEYS[2] the header): the first call of every instance. */
export const SHAPE_SCRIPT = `${SHAPE_CHECK}
return 0
`;

/**
 * A local-first process's delta, pushed once: KEYS[3] the number of the process's last applied
 * push (kept a day after its last push). ARGV[2] unused, ARGV[3] the push's sequence number, ARGV[4] the delta's total,
 * then pairs of (cell, amount). A push whose number is not above the process's last is not
 * applied again (its reply was lost and it was sent anew). Either way the reply is the whole
 * cells string: the snapshot the process reads from until its next push.
 */
export const PUSH_SCRIPT = `${SHAPE_CHECK}
local last = tonumber(redis.call('GET', KEYS[3]) or '0')
local seq = tonumber(ARGV[3])
if seq > last then
  -- In chunks: unpack() takes some thousands of values at most.
  local pairs_count = (#ARGV - 4) / 2
  for first = 1, pairs_count, 1000 do
    local final = math.min(pairs_count, first + 999)
    local reads = {}
    for j = first, final do
      reads[#reads + 1] = 'GET'; reads[#reads + 1] = 'i32'; reads[#reads + 1] = '#' .. ARGV[3 + 2 * j]
    end
    local values = redis.call('BITFIELD', KEYS[1], unpack(reads))
    local sets = {}
    for k, value in ipairs(values) do
      local j = first + k - 1
      if value ~= SAT and value ~= -SAT then
        local next = math.max(-SAT, math.min(SAT, value + tonumber(ARGV[4 + 2 * j])))
        sets[#sets + 1] = 'SET'; sets[#sets + 1] = 'i32'; sets[#sets + 1] = '#' .. ARGV[3 + 2 * j]
        sets[#sets + 1] = next
      end
    end
    if #sets > 0 then redis.call('BITFIELD', KEYS[1], unpack(sets)) end
  end
  redis.call('HINCRBY', KEYS[2], 'total', ARGV[4])
  redis.call('SET', KEYS[3], seq, 'PX', 86400000)
end
return redis.call('GET', KEYS[1]) or ''
`;

/**
 * The sliding window's admission and update (limits/rate-limiter.ts, `raiseWithin` with floor
 * -SAT and the window's ceiling), atomic: KEYS[1] the current window's cells, KEYS[2] the
 * header (unused: the limiter checks the shape once, with SHAPE_SCRIPT, before its first check),
 * KEYS[3] the previous window's cells. ARGV[1] the limit, ARGV[2] the fraction of the
 * current window elapsed, ARGV[3] the cost, ARGV[4] in how many ms the current window's key expires
 * (at the end of the window after it, by the caller's clock, so that Redis's own clock does not
 * matter), ARGV[5..] the key's cells. Returns { count found or raised to,
 * the previous window's estimate, the ceiling }.
 */
export const SLIDING_SCRIPT = `
local SAT = 2147483647
local limit = tonumber(ARGV[1])
local fraction = tonumber(ARGV[2])
local cost = tonumber(ARGV[3])
local reads = {}
for i = 5, #ARGV do
  reads[#reads + 1] = 'GET'; reads[#reads + 1] = 'i32'; reads[#reads + 1] = '#' .. ARGV[i]
end
local previous = SAT
for _, value in ipairs(redis.call('BITFIELD_RO', KEYS[3], unpack(reads))) do
  if value < previous then previous = value end
end
local ceiling = math.floor(limit - previous * (1 - fraction))
local values = redis.call('BITFIELD_RO', KEYS[1], unpack(reads))
local estimate = SAT
for _, value in ipairs(values) do
  if value < estimate then estimate = value end
end
if cost == 0 then return { estimate, previous, ceiling } end
local target = SAT
if estimate < SAT - cost then target = estimate + cost end
if target <= ceiling then
  local sets = {}
  for i, value in ipairs(values) do
    if value < target and value ~= -SAT then
      sets[#sets + 1] = 'SET'; sets[#sets + 1] = 'i32'; sets[#sets + 1] = '#' .. ARGV[i + 4]
      sets[#sets + 1] = target
    end
  end
  if #sets > 0 then redis.call('BITFIELD', KEYS[1], unpack(sets)) end
  redis.call('PEXPIRE', KEYS[1], ARGV[4])
end
return { target, previous, ceiling }
`;
