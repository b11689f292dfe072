/**
 * The sketch's update rules as Lua, for Redis: a script runs atomically, so an update is one
 * round trip that no other client's update can interleave with. They are the rules of
 * sketch/count-min.ts over the cells of one Redis string (BITFIELD i32 at #cell), with the
 * same sticky saturation as sketch/counters.ts (a cell at +-(2^31 - 1) stays there, so a later
 * decrement cannot pull it below the truth), written once below (RULES) for every script; the
 * tests feed Redis and local sketches and limiters the same stream and compare them.
 *
 * KEYS[1] the cells, KEYS[2] the header hash. ARGV[1] the shape ("width:depth:rule:fingerprint",
 * written by the first writer; a writer with another shape gets an error, never a write), ARGV[2]
 * the amount, ARGV[3..] the key's cell per row.
 */
import { createHash } from 'node:crypto';
import type { RedisScript } from './client.js';

/**
 * The two rules over a Redis string's cells, as Lua functions: `add_cells` (plain: each cell
 * plus its amount, saturating, sticky) and `raise_cells` (conservative: each cell below a
 * target up to it; a cell at -SAT stays there), and `reads`, BITFIELD's GET arguments.
 */
const RULES = `
local SAT = 2147483647
local function reads(cells, first, last)
  local args = {}
  for i = first, last do
    args[#args + 1] = 'GET'; args[#args + 1] = 'i32'; args[#args + 1] = '#' .. cells[i]
  end
  return args
end
local function add_cells(key, cells, amounts, first, last)
  local values = redis.call('BITFIELD', key, unpack(reads(cells, first, last)))
  local sets = {}
  for k, value in ipairs(values) do
    local i = first + k - 1
    if value ~= SAT and value ~= -SAT then
      values[k] = math.max(-SAT, math.min(SAT, value + amounts[i]))
      sets[#sets + 1] = 'SET'; sets[#sets + 1] = 'i32'; sets[#sets + 1] = '#' .. cells[i]
      sets[#sets + 1] = values[k]
    end
  end
  if #sets > 0 then redis.call('BITFIELD', key, unpack(sets)) end
  return values
end
local function raise_cells(key, cells, values, target)
  local sets = {}
  for i, value in ipairs(values) do
    if value < target and value ~= -SAT then
      sets[#sets + 1] = 'SET'; sets[#sets + 1] = 'i32'; sets[#sets + 1] = '#' .. cells[i]
      sets[#sets + 1] = target
    end
  end
  if #sets > 0 then redis.call('BITFIELD', key, unpack(sets)) end
end
local function least(values)
  local low = SAT
  for _, value in ipairs(values) do
    if value < low then low = value end
  end
  return low
end
`;

/** Checks or sets the shape (KEYS[2] the header, ARGV[1] the shape), then the rules. */
const SHAPE_CHECK = `
local shape = redis.call('HGET', KEYS[2], 'shape')
if not shape then
  redis.call('HSET', KEYS[2], 'shape', ARGV[1], 'total', 0)
elseif shape ~= ARGV[1] then
  return redis.error_reply('HOTCOUNT_SHAPE ' .. shape)
end
${RULES}`;

/** The shape check, then the key's cells (ARGV[3..]) and the amount (ARGV[2]). */
const KEY_UPDATE = `${SHAPE_CHECK}
local by = tonumber(ARGV[2])
local cells = {}
for i = 3, #ARGV do cells[#cells + 1] = ARGV[i] end
`;

/** Plain rule: adds `by` (signed) to each cell, saturating and sticky; returns the least. */
export const ADD_SCRIPT = `${KEY_UPDATE}
local amounts = {}
for i = 1, #cells do amounts[i] = by end
local values = add_cells(KEYS[1], cells, amounts, 1, #cells)
redis.call('HINCRBY', KEYS[2], 'total', by)
return least(values)
`;

/**
 * Conservative rule: raises each cell to target = estimate + by (saturating at 2^31 - 1); a
 * cell at -(2^31 - 1) stays there. Returns the target, the key's new estimate.
 */
export const RAISE_SCRIPT = `${KEY_UPDATE}
local values = redis.call('BITFIELD', KEYS[1], unpack(reads(cells, 1, #cells)))
local estimate = least(values)
local target = SAT
if estimate < SAT - by then target = estimate + by end
raise_cells(KEYS[1], cells, values, target)
redis.call('HINCRBY', KEYS[2], 'total', by)
return target
`;

/** Checks or sets the shape alone (KEYS[2] the header): the first call of every instance. */
export const SHAPE_SCRIPT = `${SHAPE_CHECK}
return 0
`;

/**
 * A local-first process's delta, pushed once: KEYS[3] the number of the process's last applied
 * push (kept a day after its last push). ARGV[2] in how many ms KEYS[1] expires ('' for never),
 * ARGV[3] the push's sequence number, ARGV[4] the delta's total (added to the header's), ARGV[5]
 * the delta's cells as one binary string of (cell u32, amount i32) pairs, big-endian: one
 * argument whatever the number of cells (a delta may touch every cell of the sketch). A push
 * whose number is not above the process's last is not applied again (its reply was lost and it
 * was sent anew). Either way the reply is the whole cells string, the snapshot the process reads
 * from until its next push.
 */
export const PUSH_SCRIPT = `${SHAPE_CHECK}
local last = tonumber(redis.call('GET', KEYS[3]) or '0')
local seq = tonumber(ARGV[3])
local pairs = ARGV[5]
if seq > last then
  local count = #pairs / 8
  -- In chunks: unpack() takes some thousands of values at most.
  for first = 0, count - 1, 1000 do
    local cells = {}
    local amounts = {}
    for i = first, math.min(count, first + 1000) - 1 do
      local cell, amount = struct.unpack('>I4>i4', pairs, i * 8 + 1)
      cells[#cells + 1] = cell
      amounts[#amounts + 1] = amount
    end
    add_cells(KEYS[1], cells, amounts, 1, #cells)
  end
  if tonumber(ARGV[4]) ~= 0 then redis.call('HINCRBY', KEYS[2], 'total', ARGV[4]) end
  redis.call('SET', KEYS[3], seq, 'PX', 86400000)
  if ARGV[2] ~= '' and count > 0 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
end
return redis.call('GET', KEYS[1]) or ''
`;

/**
 * A local-first limiter's push into one window (local-first-windows.ts): as PUSH_SCRIPT, with
 * KEYS[4] the previous window, whose cells come back beside the window's, and the delta as
 * BITFIELD's own subcommands, ARGV[4..] = INCRBY i32 #cell amount, four arguments per cell,
 * applied by BITFIELD with OVERFLOW SAT in native code, no Lua per cell. That is the sticky rule
 * here: a window's cells and amounts are never negative (requests' costs), and for those a cell
 * that saturates at 2^31 - 1 stays there either way. Measured, it is what keeps Redis's time per
 * push from growing with each cell's Lua (the plain push costs several us per cell).
 */
export const WINDOW_PUSH_SCRIPT = `${SHAPE_CHECK}
local last = tonumber(redis.call('GET', KEYS[3]) or '0')
local seq = tonumber(ARGV[3])
if seq > last then
  -- In chunks of 1000 cells: unpack() takes some thousands of values at most.
  for first = 4, #ARGV, 4000 do
    redis.call('BITFIELD', KEYS[1], 'OVERFLOW', 'SAT', unpack(ARGV, first, math.min(#ARGV, first + 3999)))
  end
  redis.call('SET', KEYS[3], seq, 'PX', 86400000)
  if #ARGV >= 4 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
end
return { redis.call('GET', KEYS[1]) or '', redis.call('GET', KEYS[4]) or '' }
`;

/**
 * A rate limiter's admissions and updates (limits/rate-limiter.ts: `raiseWithin`, the conservative
 * rule with a floor and a ceiling), for both of its algorithms, for a batch of checks of one
 * window (redis-rate-limiter.ts gathers the checks of a tick): each check is decided in turn, as
 * if each were a script of its own in that order, on the cells as the checks before it left them.
 *
 * Why a batch: Redis spends more on running a script (its arguments, its context, the reply and
 * the socket) than on the few cells one check touches, and a client more still on each command.
 * One call for the checks of a tick reads each window's cells once (one BITFIELD_RO each for
 * every cell of the batch), decides in Lua, and writes the raised cells once (one BITFIELD).
 *
 * KEYS[1] the current window's (or era's) cells, KEYS[2] the header (unused: the limiter checks
 * the shape once, with SHAPE_SCRIPT, before its first check), KEYS[3] the previous window's
 * cells. ARGV[1] the algorithm, 's' (sliding window) or 'g' (gcra); ARGV[2] d, the cells per
 * check; ARGV[3] in how many ms the current window's key expires (at the end of the window after
 * it, by the caller's clock, so that Redis's own clock does not matter); ARGV[4] the limit ('s')
 * or an era in ticks ('g'); ARGV[5] burst * T in ticks ('g', else 0). Then per check, 2 + d
 * arguments: the amount (0 peeks), the fraction of the window elapsed ('s') or the time in ticks
 * of the era ('g'), and the key's d cells as BITFIELD offsets ('#cell').
 * - 's': floor -SAT; ceiling floor(limit - previous * (1 - fraction)).
 * - 'g': floor the later of the previous era's TAT and now; ceiling now plus burst * T.
 * Returns, per check, { the key's least cell, raised to the target if it passed, else the target
 * refused; the previous window's least cell; the ceiling; the floor }, one flat array.
 */
export const WINDOW_SCRIPT = `
local SAT = 2147483647
local max, round_down = math.max, math.floor
local gcra = ARGV[1] == 'g'
local d = tonumber(ARGV[2])
local rule = tonumber(ARGV[4])
local horizon = tonumber(ARGV[5])
local per = 2 + d
local n = (#ARGV - 5) / per
-- Every cell of the batch, read once in each window (a cell two checks share is read twice,
-- which BITFIELD answers alike); names[k] is the k-th cell's offset, '#c'.
local names, reads, r = {}, {}, 0
for j = 0, n - 1 do
  local base = 8 + j * per
  for i = 0, d - 1 do
    local name = ARGV[base + i]
    names[j * d + i + 1] = name
    reads[r + 1] = 'GET'; reads[r + 2] = 'i32'; reads[r + 3] = name
    r = r + 3
  end
end
local before = redis.call('BITFIELD_RO', KEYS[3], unpack(reads))
local found = redis.call('BITFIELD_RO', KEYS[1], unpack(reads))
-- The current window's cells as the checks before leave them, by name.
local cells, raised = {}, {}
for k = 1, n * d do cells[names[k]] = found[k] end
local out, o = {}, 0
for j = 0, n - 1 do
  local amount = tonumber(ARGV[6 + j * per])
  local at = tonumber(ARGV[7 + j * per])
  local previous, estimate = SAT, SAT
  for k = j * d + 1, j * d + d do
    local value = before[k]
    if value < previous then previous = value end
    value = cells[names[k]]
    if value < estimate then estimate = value end
  end
  local floor, ceiling
  if gcra then
    floor = max(previous - rule, at)
    ceiling = at + horizon
  else
    floor = -SAT
    ceiling = round_down(rule - previous * (1 - at))
  end
  local result = estimate
  if amount ~= 0 then
    result = SAT
    local from = max(estimate, floor)
    if from < SAT - amount then result = from + amount end
    if result <= ceiling then
      for k = j * d + 1, j * d + d do
        local name = names[k]
        local value = cells[name]
        if value < result and value ~= -SAT then
          cells[name] = result
          raised[name] = true
        end
      end
    end
  end
  out[o + 1] = result; out[o + 2] = previous; out[o + 3] = ceiling; out[o + 4] = floor
  o = o + 4
end
local sets, s = {}, 0
for name in pairs(raised) do
  sets[s + 1] = 'SET'; sets[s + 2] = 'i32'; sets[s + 3] = name; sets[s + 4] = cells[name]
  s = s + 4
end
if s > 0 then
  redis.call('BITFIELD', KEYS[1], unpack(sets))
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
end
return out
`;

/**
 * Inflight across processes (redis-inflight.ts). KEYS[1] the counts (plain cells), KEYS[2] the
 * header, KEYS[3] the leases (a sorted set: process id -> when its lease ends, by Redis's
 * clock), KEYS[4] the calling process's guards (a hash: guard id -> "n cell cell ..."). ARGV[1]
 * the shape, ARGV[2] the operation ('a' acquire, 'r' release, 'e' estimate, 'l' lease), ARGV[3]
 * the process id, ARGV[4] the lease in ms, ARGV[5] the guard id, ARGV[6] n, ARGV[7] the limit
 * (0: none), ARGV[8] the prefix of every process's guards key, ARGV[9..] the key's cells.
 *
 * First, every process whose lease has ended is reaped: each of its guards is given back and
 * its records deleted (its keys share the hash tag, so the slot, of the caller's). Then the
 * operation, atomic: acquire checks the limit and adds in one step, and records the guard; a
 * guard already recorded (a retry whose first reply was lost) is not added again; release gives
 * back a recorded guard and deletes the record, once (a release of a guard reaped or released
 * does nothing). Returns { 1 if acquired or released (else 0), the key's estimate }.
 */
export const INFLIGHT_SCRIPT = `${SHAPE_CHECK}
local function parse(record)
  local cells = {}
  local n = nil
  for word in string.gmatch(record, '%S+') do
    if n == nil then n = tonumber(word) else cells[#cells + 1] = word end
  end
  return n, cells
end
local function give_back(record)
  local n, cells = parse(record)
  local amounts = {}
  for i = 1, #cells do amounts[i] = -n end
  add_cells(KEYS[1], cells, amounts, 1, #cells)
end
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
for _, pid in ipairs(redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', now)) do
  local guards = ARGV[8] .. pid
  for _, record in ipairs(redis.call('HVALS', guards)) do give_back(record) end
  redis.call('DEL', guards)
  redis.call('ZREM', KEYS[3], pid)
end
local op = ARGV[2]
if op ~= 'e' then redis.call('ZADD', KEYS[3], now + tonumber(ARGV[4]), ARGV[3]) end
local cells = {}
for i = 9, #ARGV do cells[#cells + 1] = ARGV[i] end
local done = 0
if op == 'a' then
  local n = tonumber(ARGV[6])
  local limit = tonumber(ARGV[7])
  if redis.call('HEXISTS', KEYS[4], ARGV[5]) == 1 then
    done = 1
  else
    local estimate = least(redis.call('BITFIELD_RO', KEYS[1], unpack(reads(cells, 1, #cells))))
    if limit == 0 or estimate + n <= limit then
      local amounts = {}
      for i = 1, #cells do amounts[i] = n end
      add_cells(KEYS[1], cells, amounts, 1, #cells)
      redis.call('HSET', KEYS[4], ARGV[5], n .. ' ' .. table.concat(cells, ' '))
      done = 1
    end
  end
elseif op == 'r' then
  local record = redis.call('HGET', KEYS[4], ARGV[5])
  if record then
    give_back(record)
    redis.call('HDEL', KEYS[4], ARGV[5])
    done = 1
  end
end
if #cells == 0 then return { done, 0 } end
return { done, least(redis.call('BITFIELD_RO', KEYS[1], unpack(reads(cells, 1, #cells)))) }
`;

/**
 * A local-first inflight's sync (local-first-inflight.ts). KEYS[1] the fleet's counts (plain
 * cells), KEYS[2] the header, KEYS[3] the leases (process id -> end of lease, Redis's clock),
 * KEYS[4] the calling process's contribution (its cells as Redis has them). ARGV[1] the shape,
 * ARGV[2] the process id, ARGV[3] the lease in ms, ARGV[4] the prefix of every process's
 * contribution key, ARGV[5] the cells whose contribution changed, as (cell u32, value i32)
 * pairs, big-endian: absolute values, so a sync sent again after a lost reply changes nothing.
 *
 * First every process whose lease has ended is reaped: its whole contribution is taken from the
 * counts and its key deleted. Then each changed cell: the counts move by (new - old), the
 * contribution becomes new. The lease is renewed. Returns { the counts, the whole string; 1 if
 * the lease was new (Redis held nothing of this process), else 0 }.
 */
export const INFLIGHT_SYNC_SCRIPT = `${SHAPE_CHECK}
local function take_back(key)
  local stored = redis.call('GET', key)
  if not stored then return end
  local cells, amounts = {}, {}
  for i = 0, #stored / 4 - 1 do
    local value = struct.unpack('>i4', stored, i * 4 + 1)
    if value ~= 0 then
      cells[#cells + 1] = i
      amounts[#amounts + 1] = -value
      if #cells == 1000 then
        add_cells(KEYS[1], cells, amounts, 1, #cells)
        cells, amounts = {}, {}
      end
    end
  end
  if #cells > 0 then add_cells(KEYS[1], cells, amounts, 1, #cells) end
  redis.call('DEL', key)
end
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
for _, pid in ipairs(redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', now)) do
  take_back(ARGV[4] .. pid)
  redis.call('ZREM', KEYS[3], pid)
end
local fresh = 0
if not redis.call('ZSCORE', KEYS[3], ARGV[2]) then
  -- A new lease, or one reaped while this process lived: what Redis held for it is gone, and
  -- the process must send its whole contribution again (fresh = 1).
  take_back(KEYS[4])
  fresh = 1
end
redis.call('ZADD', KEYS[3], now + tonumber(ARGV[3]), ARGV[2])
local pairs = ARGV[5]
local count = #pairs / 8
for first = 0, count - 1, 1000 do
  local cells, amounts, values = {}, {}, {}
  for i = first, math.min(count, first + 1000) - 1 do
    local cell, value = struct.unpack('>I4>i4', pairs, i * 8 + 1)
    cells[#cells + 1] = cell
    values[#values + 1] = value
  end
  local old = redis.call('BITFIELD', KEYS[4], unpack(reads(cells, 1, #cells)))
  local sets = {}
  for i = 1, #cells do
    amounts[i] = values[i] - old[i]
    sets[#sets + 1] = 'SET'; sets[#sets + 1] = 'i32'; sets[#sets + 1] = '#' .. cells[i]
    sets[#sets + 1] = values[i]
  end
  add_cells(KEYS[1], cells, amounts, 1, #cells)
  redis.call('BITFIELD', KEYS[4], unpack(sets))
end
return { redis.call('GET', KEYS[1]) or '', fresh }
`;

/**
 * A structure's cells and total at one moment (redis-count-min.ts, `toSketch`): KEYS[1] the
 * cells, KEYS[2] the header. Returns { the cells, the whole string; the total }. A script rather
 * than MULTI so that every client runs it the same way (client.ts).
 */
export const READ_SCRIPT = `
return { redis.call('GET', KEYS[1]) or '', redis.call('HGET', KEYS[2], 'total') or '0' }
`;

/** A script for the seams (client.ts): its SHA-1 is what EVALSHA names it by. */
function script(name: string, lua: string, keys: number): RedisScript {
  return { name, lua, keys, sha: createHash('sha1').update(lua).digest('hex') };
}

export const ADD = script('hotcountAdd', ADD_SCRIPT, 2);
export const RAISE = script('hotcountRaise', RAISE_SCRIPT, 2);
export const SHAPE = script('hotcountShape', SHAPE_SCRIPT, 2);
export const PUSH = script('hotcountPush', PUSH_SCRIPT, 3);
export const WINDOW_PUSH = script('hotcountPushWindow', WINDOW_PUSH_SCRIPT, 4);
export const INFLIGHT = script('hotcountInflight', INFLIGHT_SCRIPT, 4);
export const INFLIGHT_SYNC = script('hotcountInflightSync', INFLIGHT_SYNC_SCRIPT, 4);
export const WINDOW = script('hotcountWindow', WINDOW_SCRIPT, 3);
export const READ = script('hotcountRead', READ_SCRIPT, 2);
/** Every script, for the seams that define them up front (ioredis-seam.ts). */
export const SCRIPTS: readonly RedisScript[] = [
  ADD,
  RAISE,
  SHAPE,
  PUSH,
  WINDOW_PUSH,
  INFLIGHT,
  INFLIGHT_SYNC,
  WINDOW,
  READ,
];
