#!/usr/bin/env node
/**
 * Builds hotcount's WebAssembly engine: emits its WAT from the generator below, compiles it
 * with wabt (a devDependency, itself WebAssembly: no install script, no native build), and
 * writes the bytes into src/engine/engine-bytes.ts, which the package embeds: no runtime
 * dependency, no file read.
 *
 *   node tools/build-engine.mjs [--wat local|shared]   (--wat: print that module's WAT)
 *
 * Two modules come out of one generator: `local` (counters in this thread's memory, plain
 * loads and stores, a scratch area for keys and batches) and `shared` (counters in a shared
 * memory, atomic read-modify-writes, no scratch: threads cannot share one). Each SipRound, the
 * column mapping and each update rule is written once, below, and expanded where a function
 * needs it, so that no call sits on the hot path.
 *
 * Why generated WAT and not AssemblyScript: the engine is a few hundred instructions of i32
 * arithmetic whose every bit must match src/hash/key-hasher.ts and src/sketch/count-min.ts;
 * WAT says exactly which instructions run (a plain load here, an atomic compare-exchange
 * there), a generator removes the repetition, and the toolchain is one package.
 *
 * The rules are those of src/sketch/count-min.ts and src/sketch/counters.ts, which stay their
 * reference: test/engine compares the two engines on random streams, cell for cell.
 */
import { writeFileSync } from 'node:fs';
import wabt from 'wabt';

/**
 * Key tags of src/hash/key-hasher.ts (TAG_INT32, TAG_FLOAT): repeated here because this runs
 * before that file is compiled; the engine's tests fail if they ever differ.
 */
const TAG_INT32 = 0x6900;
const TAG_FLOAT = 0x6600;
const SATURATED = 0x7fffffff;

/**
 * Memory layouts. The engine exports them (the globals `layout*`), and src/engine/engine.ts
 * refuses to run a module whose layout differs from its own constants.
 *
 * Local memory, from the sketch's origin (a multiple of 64: several sketches of one shape may
 * share a memory, each at an origin of its own; see count-min.ts, group):  0-7 the last key's
 * hash (h1, h2) | 8 saturated (0/1) | 12 volume (see LocalCounters) | 16-23 total (f64) | 24,
 * 28 what hashLines reports | 32, 36 what a window step read (its other estimate, its
 * ceiling) | 64-16383 scratch: a key's bytes from 64, or a batch of up to 1024 int keys from
 * 8192 | 16384- the cells, row after row.
 * Shared memory: the layout of src/sketch/shared-counters.ts (its version 2). Both layouts are
 * src/engine/layout.ts, against which the engine checks these at load.
 */
const LOCAL = {
  saturated: 8,
  volume: 12,
  total: 16,
  consumed: 24,
  emptyLines: 28,
  stepOther: 32,
  stepCeiling: 36,
  scratch: 64,
  batch: 8192,
  cells: 16384,
};
const SHARED = { saturated: 20, claimed: 28, overflow: 48, words: 64, cells: 4160 };
const TOTAL_WORDS = 1024;
const LINES = 64;

let labels = 0;
const label = (name) => `$${name}${labels++}`;

// Scalar i32 and v128 (i32x4) forms of the operations a SipRound uses.
const I32 = {
  add: (a, b) => `(i32.add ${a} ${b})`,
  xor: (a, b) => `(i32.xor ${a} ${b})`,
  rotl: (a, n) => `(i32.rotl ${a} (i32.const ${n}))`,
  splat: (a) => a,
};
/**
 * Byte shuffles that rotate every 32-bit lane left by 8 or 16 bits: one instruction on the
 * shuffle unit instead of two shifts and an or. Shifts were the bound of the vector hash (12
 * of a round's 26 operations, on two ports).
 */
const ROTATE_BYTES = {
  8: [3, 0, 1, 2],
  16: [2, 3, 0, 1],
};
function shuffleRotation(a, n) {
  const lanes = [0, 4, 8, 12].flatMap((base) => ROTATE_BYTES[n].map((byte) => base + byte));
  return `(i8x16.shuffle ${lanes.join(' ')} ${a} ${a})`;
}
const X4 = {
  add: (a, b) => `(i32x4.add ${a} ${b})`,
  xor: (a, b) => `(v128.xor ${a} ${b})`,
  rotl: (a, n) =>
    n in ROTATE_BYTES
      ? shuffleRotation(a, n)
      : `(v128.or (i32x4.shl ${a} (i32.const ${n})) (i32x4.shr_u ${a} (i32.const ${32 - n})))`,
  splat: (a) => `(i32x4.splat ${a})`,
};

const get = (name) => `(local.get $${name})`;
/** A load or store's address of a field of LOCAL: from the sketch's origin. */
const field = (name) => `offset=${LOCAL[name]} (global.get $origin)`;
/** Where a local sketch's cells start (origin + LOCAL.cells), set by init. */
const LOCAL_CELLS = '(global.get $cells)';
const SHARED_CELLS = `(i32.const ${SHARED.cells})`;
const set = (name, value) => `(local.set $${name} ${value})`;
const c = (value) => `(i32.const ${value | 0})`;
const lines = (...parts) => parts.flat().join('\n');

/**
 * HalfSipHash-1-3 (Aumasson & Bernstein) over locals named p+'v0'..p+'v3' with the operations
 * `ops` (I32 for one key, X4 for four keys at once).
 */
function hasher(ops, p) {
  const v = (i) => get(`${p}v${i}`);
  const to = (i, value) => set(`${p}v${i}`, value);
  const round = () =>
    lines(
      to(0, ops.add(v(0), v(1))),
      to(1, ops.rotl(v(1), 5)),
      to(1, ops.xor(v(1), v(0))),
      to(0, ops.rotl(v(0), 16)),
      to(2, ops.add(v(2), v(3))),
      to(3, ops.rotl(v(3), 8)),
      to(3, ops.xor(v(3), v(2))),
      to(0, ops.add(v(0), v(3))),
      to(3, ops.rotl(v(3), 7)),
      to(3, ops.xor(v(3), v(0))),
      to(2, ops.add(v(2), v(1))),
      to(1, ops.rotl(v(1), 13)),
      to(1, ops.xor(v(1), v(2))),
      to(2, ops.rotl(v(2), 16)),
    );
  return {
    /** The initial state for a key tagged `tag` (an i32 expression), keyed by $k0, $k1. */
    start: (tag) =>
      lines(
        to(0, ops.splat('(global.get $k0)')),
        to(1, ops.splat(`(i32.xor (i32.xor (global.get $k1) ${c(0xee)}) ${tag})`)),
        to(2, ops.splat(`(i32.xor (global.get $k0) ${c(0x6c796765)})`)),
        to(3, ops.splat(`(i32.xor (global.get $k1) ${c(0x74656462)})`)),
      ),
    /** One compression (one round) of the message word `m` (an expression without effects). */
    compress: (m) => lines(to(3, ops.xor(v(3), m)), round(), to(0, ops.xor(v(0), m))),
    /** Finalization, 3 rounds per output word; the 64-bit result into locals `h1`, `h2`. */
    finish: (h1, h2) =>
      lines(
        to(2, ops.xor(v(2), ops.splat(c(0xee)))),
        round(),
        round(),
        round(),
        set(h1, ops.xor(v(1), v(3))),
        to(1, ops.xor(v(1), ops.splat(c(0xdd)))),
        round(),
        round(),
        round(),
        set(h2, ops.xor(v(1), v(3))),
      ),
  };
}

const scalar = hasher(I32, '');
/** A local engine leaves the last hash at its origin (bytes 0-7). */
const STORE_HASH = `(i32.store offset=0 (global.get $origin) ${get('h1')}) (i32.store offset=4 (global.get $origin) ${get('h2')})`;
const HASH_LOCALS =
  '(local $v0 i32) (local $v1 i32) (local $v2 i32) (local $v3 i32) (local $h1 i32) (local $h2 i32)';

/**
 * A number `key` (f64 local): a 32-bit integer as its two's complement sign-extended to 8 bytes
 * under TAG_INT32, any other finite number as its IEEE-754 bytes under TAG_FLOAT: the same two
 * words and length block as KeyHasher.hashNumber. -0 is the integer 0 there too.
 */
function hashNumber(key) {
  const isInt = `(f64.eq (f64.convert_i32_s (i32.trunc_sat_f64_s ${get(key)})) ${get(key)})`;
  return lines(
    `(if ${isInt}`,
    `  (then ${set('lo', `(i32.trunc_sat_f64_s ${get(key)})`)} ${set('hi', `(i32.shr_s ${get('lo')} ${c(31)})`)} ${set('tag', c(TAG_INT32))})`,
    `  (else ${set('bits', `(i64.reinterpret_f64 ${get(key)})`)}`,
    `    ${set('lo', `(i32.wrap_i64 ${get('bits')})`)} ${set('hi', `(i32.wrap_i64 (i64.shr_u ${get('bits')} (i64.const 32)))`)} ${set('tag', c(TAG_FLOAT))}))`,
    hashWords(get('tag')),
  );
}
const NUMBER_LOCALS = '(local $lo i32) (local $hi i32) (local $tag i32) (local $bits i64)';

/** Two message words in locals lo, hi (a number's 8 bytes), then the length block of 8. */
function hashWords(tag) {
  return lines(
    scalar.start(tag),
    scalar.compress(get('lo')),
    scalar.compress(get('hi')),
    scalar.compress(c(0x08000000)),
    scalar.finish('h1', 'h2'),
  );
}

/** `len` bytes from `ptr` under `tag`, as KeyHasher.hashBytes (4 bytes per word, LE). */
function hashBytes() {
  const loop = label('words');
  const done = label('done');
  return lines(
    scalar.start(get('tag')),
    set('end', `(i32.add ${get('ptr')} (i32.and ${get('len')} ${c(~3)}))`),
    `(block ${done} (loop ${loop}`,
    `  (br_if ${done} (i32.ge_u ${get('ptr')} ${get('end')}))`,
    `  ${set('m', `(i32.load align=1 ${get('ptr')})`)}`,
    scalar.compress(get('m')),
    `  ${set('ptr', `(i32.add ${get('ptr')} ${c(4)})`)}`,
    `  (br ${loop})))`,
    ';; Length block: the length mod 256 in the top byte, the 0-3 bytes left below it.',
    set('rest', `(i32.and ${get('len')} ${c(3)})`),
    set('m', `(i32.shl ${get('len')} ${c(24)})`),
    `(if (i32.gt_u ${get('rest')} ${c(0)}) (then ${set('m', `(i32.or ${get('m')} (i32.load8_u ${get('ptr')}))`)}))`,
    `(if (i32.gt_u ${get('rest')} ${c(1)}) (then ${set('m', `(i32.or ${get('m')} (i32.shl (i32.load8_u offset=1 ${get('ptr')}) ${c(8)}))`)}))`,
    `(if (i32.gt_u ${get('rest')} ${c(2)}) (then ${set('m', `(i32.or ${get('m')} (i32.shl (i32.load8_u offset=2 ${get('ptr')}) ${c(16)}))`)}))`,
    scalar.compress(get('m')),
    scalar.finish('h1', 'h2'),
  );
}
const BYTES_LOCALS = '(local $m i32) (local $end i32) (local $rest i32)';

/**
 * The byte address of the key's cell in row `row` (expressions: `cells` where the cells start,
 * `off` = row * width): column
 * g = h1 + row * h2 (mod 2^32) mapped onto [0, width) as floor(g * width / 2^32). count-min.ts
 * computes it in f64, (g * width) * 2^-32 truncated, and the engine must agree for every width
 * up to 2^28. Up to width 2^21, g * width < 2^53 is exact in f64, so the exact 64-bit product's
 * high word is the same number, and it is the faster one (measured: a third of the time of a
 * row at depth 4); above, the engine runs the same f64 operations as JS, which IEEE 754 rounds
 * the same way. The choice is per sketch (global $exact), so the branch always goes one way.
 */
function cellAddress(cells, row, off) {
  const g = `(i32.add ${get('h1')} (i32.mul ${row} ${get('h2')}))`;
  const exact = `(i32.wrap_i64 (i64.shr_u (i64.mul (i64.extend_i32_u ${g}) (global.get $width64)) (i64.const 32)))`;
  const double = `(i32.trunc_f64_u (f64.mul (f64.mul (f64.convert_i32_u ${g}) (global.get $widthF)) (f64.const 0x1p-32)))`;
  const column = `(if (result i32) (global.get $exact) (then ${exact}) (else ${double}))`;
  return `(i32.add ${cells} (i32.shl (i32.add ${off} ${column}) ${c(2)}))`;
}

/** `body` once per row, with local `a` the byte address of the key's cell in that row. */
function forEachRow(cells, body) {
  const loop = label('rows');
  return lines(
    set('row', c(0)),
    set('off', c(0)),
    `(loop ${loop}`,
    set('a', cellAddress(cells, get('row'), get('off'))),
    body,
    set('row', `(i32.add ${get('row')} ${c(1)})`),
    set('off', `(i32.add ${get('off')} (global.get $width))`),
    `(br_if ${loop} (i32.lt_u ${get('row')} (global.get $depth))))`,
  );
}
const ROW_LOCALS =
  '(local $row i32) (local $off i32) (local $a i32) (local $v i32) (local $r i32) (local $min i32) (local $t i32)';

/** name = min(name, value), branch-free: the comparison of random cells mispredicts half the time. */
const minInto = (name, value) =>
  set(name, `(select ${value} ${get(name)} (i32.lt_s ${value} ${get(name)}))`);
const isStuck = (value) =>
  `(i32.or (i32.eq ${value} ${c(SATURATED)}) (i32.eq ${value} ${c(-SATURATED)}))`;
/** value + delta clamped to +/-SATURATED, exact in i64 (counters.ts, saturatingSum). */
const saturatingSum = (value, delta) =>
  `(i32.wrap_i64 (call $clamp (i64.add (i64.extend_i32_s ${value}) (i64.extend_i32_s ${delta}))))`;

/**
 * The estimate: the least of the key's cells (count-min.ts, estimateHash). Into `min`.
 */
function estimate(cells, load) {
  return lines(
    set('min', c(SATURATED)),
    forEachRow(cells, lines(set('v', load(get('a'))), minInto('min', get('v')))),
  );
}

/**
 * Plain update of this thread's cells (count-min.ts addHash over LocalCounters.addEach): while
 * the volume (a bound on every |cell|) plus |delta| stays below SATURATED, no cell can reach a
 * limit, so the cells are added to without checks; otherwise each cell saturates and sticks as
 * LocalCounters.add does. The least new value into `min`; the total gains delta.
 */
function localAdd() {
  return lines(
    set('min', c(SATURATED)),
    set(
      'mag',
      `(select (i32.sub ${c(0)} ${get('delta')}) ${get('delta')} (i32.lt_s ${get('delta')} ${c(0)}))`,
    ),
    `(if (i32.lt_u (i32.add ${get('vol')} ${get('mag')}) ${c(SATURATED)})`,
    `(then ${set('vol', `(i32.add ${get('vol')} ${get('mag')})`)}`,
    forEachRow(
      LOCAL_CELLS,
      lines(
        set('v', `(i32.add (i32.load ${get('a')}) ${get('delta')})`),
        `(i32.store ${get('a')} ${get('v')})`,
        minInto('min', get('v')),
      ),
    ),
    ')',
    '(else',
    forEachRow(
      LOCAL_CELLS,
      lines(
        set('r', `(i32.load ${get('a')})`),
        `(if (i32.eqz ${isStuck(get('r'))}) (then`,
        set('r', saturatingSum(get('r'), get('delta'))),
        `(i32.store ${get('a')} ${get('r')})`,
        set(
          'mag',
          `(select (i32.sub ${c(0)} ${get('r')}) ${get('r')} (i32.lt_s ${get('r')} ${c(0)}))`,
        ),
        `(if (i32.eq ${get('mag')} ${c(SATURATED)}) (then (i32.store ${field('saturated')} ${c(1)})))`,
        `(if (i32.gt_s ${get('mag')} ${get('vol')}) (then ${set('vol', get('mag'))}))`,
        '))',
        minInto('min', get('r')),
      ),
    ),
    '))',
    set('count', `(i64.add ${get('count')} (i64.extend_i32_s ${get('delta')}))`),
  );
}

/**
 * The volume and the total of a local engine are kept in locals while a call runs (in a batch,
 * across all its keys, so that no key waits for the previous key's store of them), read before
 * and written back after.
 */
const localPrologue = () =>
  lines(set('vol', `(i32.load ${field('volume')})`), set('count', '(i64.const 0)'));
const localEpilogue = () =>
  lines(
    `(i32.store ${field('volume')} ${get('vol')})`,
    `(f64.store ${field('total')} (f64.add (f64.load ${field('total')}) (f64.convert_i64_s ${get('count')})))`,
  );

/**
 * Conservative update of this thread's cells (count-min.ts raiseHash over LocalCounters): read
 * the estimate m, then raise every cell below t = m + by (saturating) to t; a cell stuck at
 * -SATURATED stays. Up to ROWS_IN_LOCALS rows, each row's address and value stay in locals
 * between the two passes (measured: 1.6x the plain update's time when both passes computed
 * the columns and loaded the cells); deeper sketches run the loop twice. One thread: nothing
 * writes between the passes, so the second pass of the loop reads what the first read.
 */
function localRaise() {
  const raise = (a) =>
    lines(
      `(i32.store ${a} ${get('t')})`,
      `(if (i32.eq ${get('t')} ${c(SATURATED)}) (then (i32.store ${field('saturated')} ${c(1)})))`,
      `(if (i32.gt_s ${get('t')} ${get('vol')}) (then ${set('vol', get('t'))}))`,
    );
  const below = (v) => `(i32.and (i32.lt_s ${v} ${get('t')}) (i32.ne ${v} ${c(-SATURATED)}))`;
  return lines(
    `(if (i32.le_u (global.get $depth) ${c(ROWS_IN_LOCALS)}) (then`,
    readRows(LOCAL_CELLS, (a) => `(i32.load ${a})`),
    target(),
    raiseInLocals(),
    ') (else',
    estimate(LOCAL_CELLS, (a) => `(i32.load ${a})`),
    target(),
    forEachRow(
      LOCAL_CELLS,
      lines(
        set('v', `(i32.load ${get('a')})`),
        `(if ${below(get('v'))} (then ${raise(get('a'))}))`,
      ),
    ),
    '))',
    set('count', `(i64.add ${get('count')} (i64.extend_i32_s ${get('delta')}))`),
  );
}

/**
 * The second pass of a local conservative update over the rows readRows kept in locals: every
 * cell below t (and not stuck at -SATURATED) raised to t. Branch-free: whether a cell is below
 * t is as random as the cells, so a branch on it mispredicts; every cell is stored, with
 * max(s, t) (a stuck cell with itself), and the flag and volume are set once, from whether any
 * cell was raised.
 */
function raiseInLocals() {
  const below = (v) => `(i32.and (i32.lt_s ${v} ${get('t')}) (i32.ne ${v} ${c(-SATURATED)}))`;
  return lines(
    set('raised', c(0)),
    [...Array(ROWS_IN_LOCALS).keys()].map((row) => {
      const s = get(`s${row}`);
      return lines(
        `(if ${inDepth(row)} (then`,
        set('r', below(s)),
        set('raised', `(i32.or ${get('raised')} ${get('r')})`),
        `(i32.store ${get(`a${row}`)} (select ${get('t')} ${s} ${get('r')}))`,
        '))',
      );
    }),
    `(if ${get('raised')} (then`,
    `(if (i32.eq ${get('t')} ${c(SATURATED)}) (then (i32.store ${field('saturated')} ${c(1)})))`,
    set('vol', `(select ${get('t')} ${get('vol')} (i32.gt_s ${get('t')} ${get('vol')}))`),
    '))',
  );
}

/**
 * The second pass of a shared conservative attempt (sharedRaise): each cell below t (and not
 * stuck) set from the value the first pass read, by a compare-exchange; a failed one starts the
 * attempt `attempt` over.
 */
function casInLocals(attempt) {
  return [...Array(ROWS_IN_LOCALS).keys()].map((row) => {
    const s = get(`s${row}`);
    return lines(
      `(if (i32.and ${inDepth(row)} (i32.and (i32.lt_s ${s} ${get('t')}) (i32.ne ${s} ${c(-SATURATED)}))) (then`,
      `(br_if ${attempt} (i32.ne (i32.atomic.rmw.cmpxchg ${get(`a${row}`)} ${s} ${get('t')}) ${s}))`,
      `(if (i32.eq ${get('t')} ${c(SATURATED)}) (then (i32.atomic.store ${c(SHARED.saturated)} ${c(1)})))))`,
    );
  });
}

/** Whether the sketch has a row `row` (a constant). */
const inDepth = (row) => `(i32.gt_u (global.get $depth) ${c(row)})`;

/**
 * The first ROWS_IN_LOCALS rows' addresses into locals a0.., their values (read by `load`)
 * into s0.., and the least of them into `min`: the first pass of a conservative update.
 */
const ROWS_IN_LOCALS = 8;
function readRows(cells, load) {
  const rows = [...Array(ROWS_IN_LOCALS).keys()];
  return lines(
    set('min', c(SATURATED)),
    set('off', c(0)),
    rows.map((row) =>
      lines(
        `(if ${inDepth(row)} (then`,
        row === 0 ? '' : set('off', `(i32.add ${get('off')} (global.get $width))`),
        set(`a${row}`, cellAddress(cells, c(row), get('off'))),
        set(`s${row}`, load(get(`a${row}`))),
        minInto('min', get(`s${row}`)),
        '))',
      ),
    ),
  );
}
const ROWS_LOCALS = [...Array(ROWS_IN_LOCALS).keys()]
  .map((row) => `(local $a${row} i32) (local $s${row} i32)`)
  .join(' ');

/** t = m + by, or SATURATED when that would reach it (count-min.ts raiseHash). */
const target = () =>
  set(
    't',
    `(select ${c(SATURATED)} (i32.add ${get('min')} ${get('delta')}) (i32.ge_s ${get('min')} (i32.sub ${c(SATURATED)} ${get('delta')})))`,
  );

/**
 * Plain update of shared cells (SharedCounters.add): each cell by a compare-exchange that
 * computes the saturating sum from the value it replaces, so no update is lost and no cell
 * wraps (an atomic add cannot saturate; see shared-counters.ts). Then the total.
 */
function sharedAdd() {
  const cas = label('cas');
  return lines(
    set('min', c(SATURATED)),
    forEachRow(
      SHARED_CELLS,
      lines(
        set('v', `(i32.atomic.load ${get('a')})`),
        `(loop ${cas}`,
        set('r', get('v')),
        `(if (i32.eqz ${isStuck(get('v'))}) (then`,
        set('r', saturatingSum(get('v'), get('delta'))),
        set('t', `(i32.atomic.rmw.cmpxchg ${get('a')} ${get('v')} ${get('r')})`),
        `(if (i32.ne ${get('t')} ${get('v')}) (then ${set('v', get('t'))} (br ${cas})))`,
        `(if ${isStuck(get('r'))} (then (i32.atomic.store ${c(SHARED.saturated)} ${c(1)})))`,
        ')))',
        minInto('min', get('r')),
      ),
    ),
    `(call $addTotal ${get('delta')})`,
  );
}

/**
 * Conservative update of shared cells: count-min.ts raiseHash, whose comment holds the proof.
 * An attempt reads every cell (s_i, least m, t = m + by), then sets each cell below t by a
 * compare-exchange from s_i, and starts over if one fails; successful attempts of one key then
 * cover disjoint ranges [m, t), so no concurrent update is lost. The s_i must be the values of
 * the first pass: a second read would let an attempt raise a cell that changed since, and then
 * count again on top of it. So they are kept in locals, which bounds the depth this code runs
 * (SHARED_CONSERVATIVE_DEPTH rows); a deeper shared conservative sketch runs the JS rule.
 */
const SHARED_CONSERVATIVE_DEPTH = ROWS_IN_LOCALS;
function sharedRaise() {
  const attempt = label('attempt');
  return lines(
    `(loop ${attempt}`,
    readRows(SHARED_CELLS, (a) => `(i32.atomic.load ${a})`),
    target(),
    casInLocals(attempt),
    ')',
    `(call $addTotal ${get('delta')})`,
  );
}

/**
 * The conservative rule with a floor and a ceiling (count-min.ts raiseWithin), by hash, over
 * locals floor, delta, ceiling: the limits' admission test and update in one call.
 * base = max(estimate, floor), t = base + by (saturating); the cells are raised to t only when
 * t <= ceiling; t (in local `t`) either way. Up to ROWS_IN_LOCALS rows (WITHIN_DEPTH); a deeper
 * sketch runs the JS rule. Local: one pass of reads, then the branch-free raise of localRaise.
 * Shared: sharedRaise's attempts, each deciding on its own reads, so that an admission made on
 * a read another thread made stale is retried, never granted twice.
 */
function withinBody(layout) {
  const local = layout === LOCAL;
  const load = (a) => (local ? `(i32.load ${a})` : `(i32.atomic.load ${a})`);
  const decide = lines(
    readRows(local ? LOCAL_CELLS : SHARED_CELLS, load),
    set('min', `(select ${get('floor')} ${get('min')} (i32.gt_s ${get('floor')} ${get('min')}))`),
    target(),
  );
  if (local) {
    return lines(
      localPrologue(),
      decide,
      `(if (i32.le_s ${get('t')} ${get('ceiling')}) (then`,
      raiseInLocals(),
      set('count', `(i64.add ${get('count')} (i64.extend_i32_s ${get('delta')}))`),
      '))',
      localEpilogue(),
    );
  }
  const attempt = label('attempt');
  const done = label('done');
  return lines(
    `(block ${done} (loop ${attempt}`,
    decide,
    `(br_if ${done} (i32.gt_s ${get('t')} ${get('ceiling')}))`,
    casInLocals(attempt),
    `(call $addTotal ${get('delta')})))`,
  );
}

function raiseWithin(layout) {
  return `
  (func (export "raiseWithin") (param $h1 i32) (param $h2 i32) (param $floor i32) (param $delta i32) (param $ceiling i32) (result i32) ${ROW_LOCALS} ${UPDATE_LOCALS}
    ${withinBody(layout)}
    ${get('t')})`;
}

/**
 * A limit's step over two sketches of one memory (count-min.ts stepHash, the reference): the
 * key's estimate p in the other sketch (whose cells start at byte `other`; p = 0 for other < 0),
 * lo = max(floor, p + floorOffset) and hi = floor(limit - p * weight), in the same doubles as
 * the JS; p and hi left at LOCAL.stepOther and LOCAL.stepCeiling. Then, on this sketch, with
 * delta 0 max(estimate, lo), writing nothing; else raiseWithin(lo, delta, hi). One call where
 * the limits made three (hash, the previous window's estimate, the test and raise). Local
 * engines, up to ROWS_IN_LOCALS rows; each key form hashes its own way first.
 */
function windowSteps() {
  const params =
    '(param $other i32) (param $floorIn f64) (param $floorOffset f64) (param $limit f64) (param $weight f64) (param $delta i32) (result i32)';
  const locals = `${ROW_LOCALS} ${UPDATE_LOCALS} (local $p i32) (local $floor i32) (local $ceiling i32)`;
  const p = `(f64.convert_i32_s ${get('p')})`;
  const body = lines(
    set('p', c(0)),
    `(if (i32.ge_s ${get('other')} ${c(0)}) (then`,
    estimate(get('other'), (a) => `(i32.load ${a})`),
    set('p', get('min')),
    '))',
    set(
      'floor',
      `(i32.trunc_sat_f64_s (f64.max ${get('floorIn')} (f64.add ${p} ${get('floorOffset')})))`,
    ),
    set(
      'ceiling',
      `(i32.trunc_sat_f64_s (f64.floor (f64.sub ${get('limit')} (f64.mul ${p} ${get('weight')}))))`,
    ),
    `(i32.store ${field('stepOther')} ${get('p')})`,
    `(i32.store ${field('stepCeiling')} ${get('ceiling')})`,
    `(if (i32.eqz ${get('delta')}) (then`,
    estimate(LOCAL_CELLS, (a) => `(i32.load ${a})`),
    set('t', `(select ${get('floor')} ${get('min')} (i32.gt_s ${get('floor')} ${get('min')}))`),
    ') (else',
    withinBody(LOCAL),
    '))',
    get('t'),
  );
  return `
  (func (export "stepNumber") (param $key f64) ${params} ${HASH_LOCALS} ${locals} ${NUMBER_LOCALS}
    ${hashNumber('key')}
    ${STORE_HASH}
    ${body})
  (func (export "stepBytes") (param $ptr i32) (param $len i32) (param $tag i32) ${params} ${HASH_LOCALS} ${locals} ${BYTES_LOCALS}
    ${hashBytes()}
    ${STORE_HASH}
    ${body})
  (func (export "stepHash") (param $h1 i32) (param $h2 i32) ${params} ${locals}
    ${body})`;
}

const UPDATE_LOCALS = `(local $mag i32) (local $vol i32) (local $count i64) (local $raised i32) ${ROWS_LOCALS}`;

/**
 * The shared total (see shared-counters.ts): this instance adds to its own Int32 word by a
 * compare-exchange that never lets the word overflow; a full word stays as it is and the
 * instance claims a fresh one from the pool (claims go round the cache lines), and once all
 * 1024 are taken, adds to the BigInt64 overflow. SharedCounters.addTotal is the same code.
 */
function sharedTotal() {
  const words = label('words');
  const cas = label('cas');
  const done = label('done');
  return `
  (func $addTotal (param $delta i32) (local $a i32) (local $v i32) (local $next i64) (local $seen i32) (local $claim i32)
    (block ${done} (loop ${words}
      (if (i32.lt_s (global.get $word) ${c(0)})
        (then (drop (i64.atomic.rmw.add ${c(SHARED.overflow)} (i64.extend_i32_s ${get('delta')}))) (br ${done})))
      ${set('a', `(i32.add ${c(SHARED.words)} (i32.shl (global.get $word) ${c(2)}))`)}
      ${set('v', `(i32.atomic.load ${get('a')})`)}
      (loop ${cas}
        ${set('next', `(i64.add (i64.extend_i32_s ${get('v')}) (i64.extend_i32_s ${get('delta')}))`)}
        (if (i32.or (i64.gt_s ${get('next')} (i64.const ${SATURATED})) (i64.lt_s ${get('next')} (i64.const ${-SATURATED})))
          (then
            ${set('claim', `(i32.add ${c(LINES)} (i32.atomic.rmw.add ${c(SHARED.claimed)} ${c(1)}))`)}
            (global.set $word (select
              (i32.or (i32.shl (i32.and ${get('claim')} ${c(LINES - 1)}) ${c(4)}) (i32.shr_u ${get('claim')} ${c(6)}))
              ${c(-1)}
              (i32.lt_u ${get('claim')} ${c(TOTAL_WORDS)})))
            (br ${words})))
        ${set('seen', `(i32.atomic.rmw.cmpxchg ${get('a')} ${get('v')} (i32.wrap_i64 ${get('next')}))`)}
        (br_if ${done} (i32.eq ${get('seen')} ${get('v')}))
        ${set('v', get('seen'))}
        (br ${cas}))))
  )`;
}

/** One exported function per (key form, rule): number, hash, bytes. */
function entryPoints(layout, rules, bytes) {
  const LOCALS = `${HASH_LOCALS} ${ROW_LOCALS} ${UPDATE_LOCALS}`;
  const local = layout === LOCAL;
  const wrap = (body) => () => (local ? lines(localPrologue(), body(), localEpilogue()) : body());
  const store = layout === LOCAL ? STORE_HASH : '';
  const out = [];
  for (const [name, rule, result] of rules) {
    const body = wrap(rule);
    out.push(`
  (func (export "${name}Number") (param $key f64) (param $delta i32) (result i32) ${LOCALS} ${NUMBER_LOCALS}
    ${hashNumber('key')}
    ${store}
    ${body()}
    ${get(result)})
  (func (export "${name}Hash") (param $h1 i32) (param $h2 i32) (param $delta i32) (result i32) ${ROW_LOCALS} ${UPDATE_LOCALS}
    ${body()}
    ${get(result)})`);
    if (bytes) {
      out.push(`
  (func (export "${name}Bytes") (param $ptr i32) (param $len i32) (param $tag i32) (param $delta i32) (result i32) ${LOCALS} ${BYTES_LOCALS}
    ${hashBytes()}
    ${store}
    ${body()}
    ${get(result)})`);
    }
  }
  return out.join('\n');
}

/**
 * Batches of int keys (local only), in place: `n` keys from LOCAL.batch, each replaced by what
 * the single call would return for it, in order. Keys are hashed eight at a time, in i32x4 lanes;
 * each is then updated in turn, so the batch equals the loop of single calls. With `unsigned`
 * the keys are uint32: one at or above 2^31 is a number that is not an int32, hashed as a
 * double, as the single call hashes it; a group with such a key is hashed one by one.
 */
function batch(name, body, result) {
  // Two groups of four: a SipRound is a chain of dependent steps, so one group leaves the
  // vector units idle; two independent chains side by side keep them busy.
  const hashers = [hasher(X4, 'x'), hasher(X4, 'y')];
  const outer = label('outer');
  const toSingles = label('toSingles');
  const groups = label('groups');
  const singles = label('singles');
  const singlesDone = label('singlesDone');
  const both = (f) => lines(hashers.map((h, i) => f(h, 'xy'[i])));
  const one = (lane) => {
    const g = 'xy'[lane >> 2];
    return lines(
      set('h1', `(i32x4.extract_lane ${lane & 3} ${get(`${g}h1`)})`),
      set('h2', `(i32x4.extract_lane ${lane & 3} ${get(`${g}h2`)})`),
      body(),
      `(i32.store offset=${LOCAL.batch + 4 * lane} ${get('at')} ${get(result)})`,
    );
  };
  const vectors = ['v0', 'v1', 'v2', 'v3', 'm', 'hi', 'h1', 'h2'];
  const vectorLocals = ['x', 'y'].flatMap((g) => vectors.map((v) => `(local $${g}${v} v128)`));
  return `
  (func (export "${name}Many") (param $n i32) (param $delta i32) (param $unsigned i32) (result i32)
      ${HASH_LOCALS} ${ROW_LOCALS} ${UPDATE_LOCALS} ${NUMBER_LOCALS} (local $at i32) (local $stop i32) (local $key f64)
      ${vectorLocals.join(' ')}
    ;; at runs from the origin (a multiple of 64, so groups stay 32-byte aligned).
    ${set('at', '(global.get $origin)')}
    ${set('stop', `(i32.add ${get('at')} (i32.shl (i32.and ${get('n')} ${c(~7)}) ${c(2)}))`)}
    ${localPrologue()}
    (loop ${outer}
      (block ${toSingles} (loop ${groups}
        (br_if ${toSingles} (i32.ge_u ${get('at')} ${get('stop')}))
        ${set('xm', `(v128.load offset=${LOCAL.batch} ${get('at')})`)}
        ${set('ym', `(v128.load offset=${LOCAL.batch + 16} ${get('at')})`)}
        (br_if ${toSingles} (i32.and ${get('unsigned')} (i32.ne (i32x4.bitmask (v128.or ${get('xm')} ${get('ym')})) ${c(0)})))
        ${both((_, g) => set(`${g}hi`, `(i32x4.shr_s ${get(`${g}m`)} ${c(31)})`))}
        ${both((h) => h.start(c(TAG_INT32)))}
        ${both((h, g) => h.compress(get(`${g}m`)))}
        ${both((h, g) => h.compress(get(`${g}hi`)))}
        ${both((h) => h.compress(`(i32x4.splat ${c(0x08000000)})`))}
        ${both((h, g) => h.finish(`${g}h1`, `${g}h2`))}
        ${[0, 1, 2, 3, 4, 5, 6, 7].map(one).join('\n')}
        ${set('at', `(i32.add ${get('at')} ${c(32)})`)}
        (br ${groups})))
      ;; One by one: the last n mod 8 keys, and a group that holds a uint32 >= 2^31.
      (block ${singlesDone} (loop ${singles}
        (br_if ${singlesDone} (i32.ge_u ${get('at')} (i32.add (global.get $origin) (i32.shl ${get('n')} ${c(2)}))))
        ${set('lo', `(i32.load offset=${LOCAL.batch} ${get('at')})`)}
        ${set('key', `(select (f64.convert_i32_u ${get('lo')}) (f64.convert_i32_s ${get('lo')}) ${get('unsigned')})`)}
        ${hashNumber('key')}
        ${body()}
        (i32.store offset=${LOCAL.batch} ${get('at')} ${get(result)})
        ${set('at', `(i32.add ${get('at')} ${c(4)})`)}
        ;; Back to groups at the next group boundary.
        (br_if ${outer} (i32.and (i32.eqz (i32.and ${get('at')} ${c(31)})) (i32.lt_u ${get('at')} ${get('stop')})))
        (br ${singles}))))
    ${localEpilogue()}
    ${get('n')})`;
}

function layoutGlobals(layout) {
  return Object.entries(layout)
    .map(([name, value]) => `  (global (export "layout_${name}") i32 (i32.const ${value}))`)
    .join('\n');
}

const CLAMP = `
  (func $clamp (param $x i64) (result i64)
    (select (i64.const ${SATURATED})
      (select (i64.const ${-SATURATED}) (local.get $x) (i64.le_s (local.get $x) (i64.const ${-SATURATED})))
      (i64.ge_s (local.get $x) (i64.const ${SATURATED}))))`;

const KEYS = `
  (global $k0 (mut i32) (i32.const 0))
  (global $k1 (mut i32) (i32.const 0))
  (global $width (mut i32) (i32.const 1))
  (global $widthF (mut f64) (f64.const 1))
  (global $width64 (mut i64) (i64.const 1))
  (global $exact (mut i32) (i32.const 1))
  (global $depth (mut i32) (i32.const 1))`;

const INIT_BODY = `
    (global.set $k0 (local.get $k0))
    (global.set $k1 (local.get $k1))
    (global.set $width (local.get $width))
    (global.set $widthF (f64.convert_i32_u (local.get $width)))
    (global.set $width64 (i64.extend_i32_u (local.get $width)))
    (global.set $exact (i32.le_u (local.get $width) (i32.const ${2 ** 21})))
    (global.set $depth (local.get $depth))`;

/**
 * The lines of `size` bytes from `chunk`, hashed where they lie (the `hotcount top` path; see
 * src/engine/chunk-hasher.ts): finds each newline sixteen bytes at a time (an i8x16 compare and
 * its bitmask), strips one CR before it, skips empty lines (counting them at
 * LOCAL.emptyLines), and for every other line [s, e) writes the record (s - base, e - base, h1,
 * h2) at `out`, up to `max` records. At LOCAL.consumed it leaves where the first line it did not
 * hand over starts, relative to `base`: an incomplete last line, or the first that found no
 * room. Returns the number of records. The 16 bytes past the data must be readable memory.
 */
function hashLines() {
  const blocks = label('blocks');
  const done = label('done');
  const full = label('full');
  const newlines = label('newlines');
  const blockDone = label('blockDone');
  const stored = (offset, value) =>
    `(i32.store offset=${offset} (i32.add ${get('out')} (i32.shl ${get('n')} ${c(4)})) ${value})`;
  return `
  (func (export "hashLines") (param $chunk i32) (param $size i32) (param $base i32) (param $out i32) (param $max i32) (result i32)
      ${HASH_LOCALS} ${BYTES_LOCALS} (local $ptr i32) (local $len i32) (local $tag i32)
      (local $at i32) (local $stop i32) (local $s i32) (local $e i32) (local $bits i32) (local $nl i32) (local $n i32) (local $empty i32)
    ${set('stop', `(i32.add ${get('chunk')} ${get('size')})`)}
    ${set('s', get('chunk'))}
    ${set('at', get('chunk'))}
    (block ${full} (block ${done} (loop ${blocks}
      (br_if ${done} (i32.ge_u ${get('at')} ${get('stop')}))
      ${set('bits', `(i8x16.bitmask (i8x16.eq (v128.load align=1 ${get('at')}) (i8x16.splat ${c(10)})))`)}
      (if (i32.lt_u (i32.sub ${get('stop')} ${get('at')}) ${c(16)})
        (then ${set('bits', `(i32.and ${get('bits')} (i32.sub (i32.shl ${c(1)} (i32.sub ${get('stop')} ${get('at')})) ${c(1)}))`)}))
      (block ${blockDone} (loop ${newlines}
        (br_if ${blockDone} (i32.eqz ${get('bits')}))
        ${set('nl', `(i32.add ${get('at')} (i32.ctz ${get('bits')}))`)}
        ${set('bits', `(i32.and ${get('bits')} (i32.sub ${get('bits')} ${c(1)}))`)}
        ${set('e', get('nl'))}
        (if (i32.and (i32.gt_u ${get('e')} ${get('s')}) (i32.eq (i32.load8_u offset=0 (i32.sub ${get('e')} ${c(1)})) ${c(13)}))
          (then ${set('e', `(i32.sub ${get('e')} ${c(1)})`)}))
        (if (i32.gt_u ${get('e')} ${get('s')})
          (then
            (br_if ${full} (i32.ge_u ${get('n')} ${get('max')}))
            ${set('ptr', get('s'))}
            ${set('len', `(i32.sub ${get('e')} ${get('s')})`)}
            ${set('tag', c(0))}
            ${hashBytes()}
            ${stored(0, `(i32.sub ${get('s')} ${get('base')})`)}
            ${stored(4, `(i32.sub ${get('e')} ${get('base')})`)}
            ${stored(8, get('h1'))}
            ${stored(12, get('h2'))}
            ${set('n', `(i32.add ${get('n')} ${c(1)})`)})
          (else ${set('empty', `(i32.add ${get('empty')} ${c(1)})`)}))
        ${set('s', `(i32.add ${get('nl')} ${c(1)})`)}
        (br ${newlines})))
      ${set('at', `(i32.add ${get('at')} ${c(16)})`)}
      (br ${blocks}))))
    (i32.store ${field('consumed')} (i32.sub ${get('s')} ${get('base')}))
    (i32.store ${field('emptyLines')} ${get('empty')})
    ${get('n')})`;
}

/** The module for counters in this thread's memory. */
export function localWat() {
  const estimateBody = () => estimate(LOCAL_CELLS, (a) => `(i32.load ${a})`);
  const rules = [
    ['add', localAdd, 'min'],
    ['raise', localRaise, 't'],
    ['estimate', estimateBody, 'min'],
  ];
  return `;; Generated by tools/build-engine.mjs: edit the generator, not this text.
(module
  (import "hotcount" "memory" (memory 1))
${layoutGlobals(LOCAL)}
${KEYS}
  ;; The 64-bit key of HalfSipHash as two words (hash/secret.ts, hashKeyWords) and the shape.
  ;; The sketch's origin in the memory (a multiple of 64; 0 for a memory of its own).
  (global $origin (mut i32) (i32.const 0))
  (global $cells (mut i32) (i32.const ${LOCAL.cells}))
  (func (export "init") (param $k0 i32) (param $k1 i32) (param $width i32) (param $depth i32) (param $origin i32)${INIT_BODY}
    (global.set $origin (local.get $origin))
    (global.set $cells (i32.add (local.get $origin) ${c(LOCAL.cells)})))
${CLAMP}
  ;; Hashes only, into bytes 0-7: the hasher that HeavyHitters and the tests use.
  (func (export "hashNumber") (param $key f64) ${HASH_LOCALS} ${NUMBER_LOCALS}
    ${hashNumber('key')}
    ${STORE_HASH})
  (func (export "hashBytes") (param $ptr i32) (param $len i32) (param $tag i32) ${HASH_LOCALS} ${BYTES_LOCALS}
    ${hashBytes()}
    ${STORE_HASH})
${entryPoints(LOCAL, rules, true)}
${raiseWithin(LOCAL)}
${windowSteps()}
${rules.map(([name, body, result]) => batch(name, body, result)).join('\n')}
${hashLines()}
)
`;
}

/** The module for counters in a shared memory, updated atomically. */
export function sharedWat() {
  const estimateBody = () => estimate(SHARED_CELLS, (a) => `(i32.atomic.load ${a})`);
  const rules = [
    ['add', sharedAdd, 'min'],
    ['raise', sharedRaise, 't'],
    ['estimate', estimateBody, 'min'],
  ];
  return `;; Generated by tools/build-engine.mjs: edit the generator, not this text.
(module
  (import "hotcount" "memory" (memory 1 65536 shared))
${layoutGlobals(SHARED)}
${KEYS}
  ;; The total word this instance adds to (-1: the overflow); see $addTotal.
  (global $word (mut i32) (i32.const -1))
  (global (export "conservativeDepth") i32 (i32.const ${SHARED_CONSERVATIVE_DEPTH}))
  (func (export "init") (param $k0 i32) (param $k1 i32) (param $width i32) (param $depth i32) (param $word i32)${INIT_BODY}
    (global.set $word (local.get $word)))
${CLAMP}
${sharedTotal()}
${entryPoints(SHARED, rules, false)}
${raiseWithin(SHARED)}
)
`;
}

/** What the engine uses beyond WebAssembly 1.0; Node 20 runs all of them without flags. */
const FEATURES = { simd: true, threads: true, sat_float_to_int: true, multi_value: true };

async function compile(tools, name, wat) {
  const parsed = tools.parseWat(`${name}.wat`, wat, FEATURES);
  parsed.validate(FEATURES);
  const { buffer } = parsed.toBinary({});
  parsed.destroy();
  return Buffer.from(buffer);
}

async function main() {
  const which = process.argv.indexOf('--wat');
  if (which >= 0) {
    process.stdout.write(process.argv[which + 1] === 'shared' ? sharedWat() : localWat());
    return;
  }
  const tools = await wabt();
  const local = await compile(tools, 'local', localWat());
  const shared = await compile(tools, 'shared', sharedWat());
  const out = new URL('../src/engine/engine-bytes.ts', import.meta.url);
  writeFileSync(
    out,
    '// Generated by tools/build-engine.mjs (npm run build): the engine, compiled. Do not edit.\n' +
      `export const LOCAL_ENGINE = ${JSON.stringify(local.toString('base64'))};\n` +
      `export const SHARED_ENGINE = ${JSON.stringify(shared.toString('base64'))};\n`,
  );
  // On stderr: npm pack --json runs the build (prepack) and its stdout must stay JSON.
  process.stderr.write(
    `engine: ${local.length} + ${shared.length} bytes of WebAssembly (local, shared)\n`,
  );
}

await main();
