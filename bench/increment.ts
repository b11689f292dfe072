/**
 * Speed of `increment` and `incrementMany` (cases 1-6) and of the keyed hash (case 7).
 *
 * Workload: 1M distinct keys, `options.events` events drawn uniformly over them (see
 * workload.ts). Each competitor's loop is its own function, called with one type of structure
 * and one type of key, so its call sites stay monomorphic; each loop returns a checksum of the
 * values it computed (estimates, counts), which is consumed. Each competitor's structure (a
 * sketch, a Map holding every key, the floor's cells) is made and warmed once and kept across
 * the rounds, so that a round times the steady state, not an allocation or a Map's growth.
 *
 * Competitors:
 * - the sketch: `CountMinSketch.increment(key)` on the WebAssembly engine (the default), on its
 *   JS reference (`engine: 'js'`), conservative, and `incrementMany` in batches of 1024;
 * - `Map`: `m.set(k, (m.get(k) ?? 0) + 1)`, the exact count a sketch replaces;
 * - the floor: the fastest plain JS for the same keyed Count-Min increment: one function, the
 *   HalfSipHash-1-3 rounds written inline, the sketch's index arithmetic over a bare Int32Array
 *   (no class, no call, no saturation, no total, no checks);
 * - the unkeyed floor: that loop with a multiply-xorshift hash, so keyed - unkeyed is what the
 *   secret costs;
 * - bloom-filters' CountMinSketch (a devDependency), which hashes strings (two XXH64 in
 *   emulated 64-bit arithmetic per update), so it gets `String(key)`.
 */
import bloomFilters from 'bloom-filters';
import { KeyHasher } from '../src/hash/key-hasher.js';
import { hashKeyWords, randomSecret } from '../src/hash/secret.js';
import { CountMinSketch, DEFAULT_DEPTH, DEFAULT_WIDTH } from '../src/index.js';
import {
  type BenchOptions,
  type Competitor,
  consume,
  formatCount,
  formatNs,
  formatRange,
  formatRatio,
  median,
  medianRatio,
  nowNs,
  type Row,
  ratiosOf,
  rotate,
  roundsOf,
} from './measure.js';
import { Prng } from './prng.js';
import { intKeys, KEY_COUNT, randomStrings, SEED, stringKeys, uniformEvents } from './workload.js';

// bloom-filters is CommonJS and defines its exports with getters, which Node's ESM named-export
// detection does not see: `import { CountMinSketch } from 'bloom-filters'` is undefined at run
// time, so take it from the default (module.exports) import.
const { CountMinSketch: BfCms } = bloomFilters;
type BloomSketch = InstanceType<typeof BfCms>;

/** 2^-32, as in count-min.ts. */
const INV_2_32 = 1 / 4294967296;
/** bloom-filters takes microseconds per event: it runs on this many events only. */
const BLOOM_EVENTS = 1_000_000;
/** Hashes per timed run in case 7. */
const HASH_OPERATIONS = 5_000_000;
/** Distinct strings per length in case 7. */
const HASH_STRINGS = 1 << 16;

// ---- The loops. One function per competitor; each returns a checksum. ----

function sketchInts(
  sketch: CountMinSketch,
  keys: Int32Array,
  events: Int32Array,
  count: number,
): number {
  let sum = 0;
  for (let i = 0; i < count; i++) sum = (sum + sketch.increment(keys[events[i]])) | 0;
  return sum;
}

/**
 * The sketch over the keys in the order they are stored (keys[0], keys[1], ... again): the
 * same keys and cells as `sketchInts`, but each key's load is a hit the CPU saw coming, so the
 * time is the update's own, without the wait for a random key.
 */
function sketchIntsInOrder(sketch: CountMinSketch, keys: Int32Array, count: number): number {
  let sum = 0;
  for (let i = 0, j = 0; i < count; i++) {
    sum = (sum + sketch.increment(keys[j])) | 0;
    if (++j === keys.length) j = 0;
  }
  return sum;
}

function mapIntsInOrder(map: Map<number, number>, keys: Int32Array, count: number): number {
  let sum = 0;
  for (let i = 0, j = 0; i < count; i++) {
    const key = keys[j];
    const value = (map.get(key) ?? 0) + 1;
    map.set(key, value);
    sum = (sum + value) | 0;
    if (++j === keys.length) j = 0;
  }
  return sum;
}

function mapInts(
  map: Map<number, number>,
  keys: Int32Array,
  events: Int32Array,
  count: number,
): number {
  let sum = 0;
  for (let i = 0; i < count; i++) {
    const key = keys[events[i]];
    const value = (map.get(key) ?? 0) + 1;
    map.set(key, value);
    sum = (sum + value) | 0;
  }
  return sum;
}

/**
 * The floor: key-hasher.ts's HalfSipHash-1-3 of an int32 key, its rounds inline, and
 * count-min.ts's index arithmetic, over bare Int32Array cells: no class, no call.
 */
// biome-ignore format: one SipRound per line
function floorKeyed(
  k0: number,
  k1: number,
  cells: Int32Array,
  width: number,
  depth: number,
  keys: Int32Array,
  events: Int32Array,
  count: number,
): number {
  let sum = 0;
  for (let i = 0; i < count; i++) {
    const lo = keys[events[i]];
    const hi = lo >> 31;
    let v0 = k0;
    let v1 = k1 ^ 0xee ^ 0x6900;
    let v2 = k0 ^ 0x6c796765;
    let v3 = k1 ^ 0x74656462;
    v3 ^= lo;
    v0 = (v0 + v1) | 0; v1 = (v1 << 5) | (v1 >>> 27); v1 ^= v0; v0 = (v0 << 16) | (v0 >>> 16); v2 = (v2 + v3) | 0; v3 = (v3 << 8) | (v3 >>> 24); v3 ^= v2; v0 = (v0 + v3) | 0; v3 = (v3 << 7) | (v3 >>> 25); v3 ^= v0; v2 = (v2 + v1) | 0; v1 = (v1 << 13) | (v1 >>> 19); v1 ^= v2; v2 = (v2 << 16) | (v2 >>> 16);
    v0 ^= lo;
    v3 ^= hi;
    v0 = (v0 + v1) | 0; v1 = (v1 << 5) | (v1 >>> 27); v1 ^= v0; v0 = (v0 << 16) | (v0 >>> 16); v2 = (v2 + v3) | 0; v3 = (v3 << 8) | (v3 >>> 24); v3 ^= v2; v0 = (v0 + v3) | 0; v3 = (v3 << 7) | (v3 >>> 25); v3 ^= v0; v2 = (v2 + v1) | 0; v1 = (v1 << 13) | (v1 >>> 19); v1 ^= v2; v2 = (v2 << 16) | (v2 >>> 16);
    v0 ^= hi;
    v3 ^= 0x08000000;
    v0 = (v0 + v1) | 0; v1 = (v1 << 5) | (v1 >>> 27); v1 ^= v0; v0 = (v0 << 16) | (v0 >>> 16); v2 = (v2 + v3) | 0; v3 = (v3 << 8) | (v3 >>> 24); v3 ^= v2; v0 = (v0 + v3) | 0; v3 = (v3 << 7) | (v3 >>> 25); v3 ^= v0; v2 = (v2 + v1) | 0; v1 = (v1 << 13) | (v1 >>> 19); v1 ^= v2; v2 = (v2 << 16) | (v2 >>> 16);
    v0 ^= 0x08000000;
    v2 ^= 0xee;
    v0 = (v0 + v1) | 0; v1 = (v1 << 5) | (v1 >>> 27); v1 ^= v0; v0 = (v0 << 16) | (v0 >>> 16); v2 = (v2 + v3) | 0; v3 = (v3 << 8) | (v3 >>> 24); v3 ^= v2; v0 = (v0 + v3) | 0; v3 = (v3 << 7) | (v3 >>> 25); v3 ^= v0; v2 = (v2 + v1) | 0; v1 = (v1 << 13) | (v1 >>> 19); v1 ^= v2; v2 = (v2 << 16) | (v2 >>> 16);
    v0 = (v0 + v1) | 0; v1 = (v1 << 5) | (v1 >>> 27); v1 ^= v0; v0 = (v0 << 16) | (v0 >>> 16); v2 = (v2 + v3) | 0; v3 = (v3 << 8) | (v3 >>> 24); v3 ^= v2; v0 = (v0 + v3) | 0; v3 = (v3 << 7) | (v3 >>> 25); v3 ^= v0; v2 = (v2 + v1) | 0; v1 = (v1 << 13) | (v1 >>> 19); v1 ^= v2; v2 = (v2 << 16) | (v2 >>> 16);
    v0 = (v0 + v1) | 0; v1 = (v1 << 5) | (v1 >>> 27); v1 ^= v0; v0 = (v0 << 16) | (v0 >>> 16); v2 = (v2 + v3) | 0; v3 = (v3 << 8) | (v3 >>> 24); v3 ^= v2; v0 = (v0 + v3) | 0; v3 = (v3 << 7) | (v3 >>> 25); v3 ^= v0; v2 = (v2 + v1) | 0; v1 = (v1 << 13) | (v1 >>> 19); v1 ^= v2; v2 = (v2 << 16) | (v2 >>> 16);
    const h1 = v1 ^ v3;
    v1 ^= 0xdd;
    v0 = (v0 + v1) | 0; v1 = (v1 << 5) | (v1 >>> 27); v1 ^= v0; v0 = (v0 << 16) | (v0 >>> 16); v2 = (v2 + v3) | 0; v3 = (v3 << 8) | (v3 >>> 24); v3 ^= v2; v0 = (v0 + v3) | 0; v3 = (v3 << 7) | (v3 >>> 25); v3 ^= v0; v2 = (v2 + v1) | 0; v1 = (v1 << 13) | (v1 >>> 19); v1 ^= v2; v2 = (v2 << 16) | (v2 >>> 16);
    v0 = (v0 + v1) | 0; v1 = (v1 << 5) | (v1 >>> 27); v1 ^= v0; v0 = (v0 << 16) | (v0 >>> 16); v2 = (v2 + v3) | 0; v3 = (v3 << 8) | (v3 >>> 24); v3 ^= v2; v0 = (v0 + v3) | 0; v3 = (v3 << 7) | (v3 >>> 25); v3 ^= v0; v2 = (v2 + v1) | 0; v1 = (v1 << 13) | (v1 >>> 19); v1 ^= v2; v2 = (v2 << 16) | (v2 >>> 16);
    v0 = (v0 + v1) | 0; v1 = (v1 << 5) | (v1 >>> 27); v1 ^= v0; v0 = (v0 << 16) | (v0 >>> 16); v2 = (v2 + v3) | 0; v3 = (v3 << 8) | (v3 >>> 24); v3 ^= v2; v0 = (v0 + v3) | 0; v3 = (v3 << 7) | (v3 >>> 25); v3 ^= v0; v2 = (v2 + v1) | 0; v1 = (v1 << 13) | (v1 >>> 19); v1 ^= v2; v2 = (v2 << 16) | (v2 >>> 16);
    const h2 = v1 ^ v3;
    let min = 0x7fffffff;
    for (let r = 0; r < depth; r++) {
      const g = (h1 + Math.imul(r, h2)) >>> 0;
      const value = ++cells[r * width + ((g * width * INV_2_32) | 0)];
      if (value < min) min = value;
    }
    sum = (sum + min) | 0;
  }
  return sum;
}

/** The floor with an unkeyed multiply-xorshift hash instead of HalfSipHash. */
function floorUnkeyed(
  cells: Int32Array,
  width: number,
  depth: number,
  keys: Int32Array,
  events: Int32Array,
  count: number,
): number {
  let sum = 0;
  for (let i = 0; i < count; i++) {
    let h = Math.imul(keys[events[i]] ^ 0x9e3779b9, 0x85ebca6b);
    h ^= h >>> 13;
    h = Math.imul(h, 0xc2b2ae35);
    h ^= h >>> 16;
    const h1 = h;
    const h2 = Math.imul(h, 0x27d4eb2f) ^ (h >>> 15);
    let min = 0x7fffffff;
    for (let r = 0; r < depth; r++) {
      const g = (h1 + Math.imul(r, h2)) >>> 0;
      const value = ++cells[r * width + ((g * width * INV_2_32) | 0)];
      if (value < min) min = value;
    }
    sum = (sum + min) | 0;
  }
  return sum;
}

/** incrementMany over `count` events, in batches of `out.length` keys copied into `batch`. */
function sketchBatches(
  sketch: CountMinSketch,
  keys: Int32Array,
  events: Int32Array,
  count: number,
  batch: Int32Array,
  out: Int32Array,
): number {
  let sum = 0;
  for (let start = 0; start < count; start += batch.length) {
    const n = Math.min(batch.length, count - start);
    for (let i = 0; i < n; i++) batch[i] = keys[events[start + i]];
    const results = sketch.incrementMany(n === batch.length ? batch : batch.subarray(0, n), 1, out);
    sum = (sum + results[n - 1]) | 0;
  }
  return sum;
}

/** What every competitor pays before it counts: reading each event's key (random in 1M). */
function gatherInts(keys: Int32Array, events: Int32Array, count: number): number {
  let sum = 0;
  for (let i = 0; i < count; i++) sum = (sum + keys[events[i]]) | 0;
  return sum;
}

/** The same for string keys: reading each event's string (its length and first character). */
function gatherStrings(keys: readonly string[], events: Int32Array, count: number): number {
  let sum = 0;
  for (let i = 0; i < count; i++) {
    const key = keys[events[i]];
    sum = (sum + key.length + key.charCodeAt(0)) | 0;
  }
  return sum;
}

function bloomInts(
  sketch: BloomSketch,
  keys: Int32Array,
  events: Int32Array,
  count: number,
): number {
  for (let i = 0; i < count; i++) sketch.update(String(keys[events[i]]), 1);
  return sketch.sum | 0;
}

function sketchStrings(
  sketch: CountMinSketch,
  keys: readonly string[],
  events: Int32Array,
  count: number,
): number {
  let sum = 0;
  for (let i = 0; i < count; i++) sum = (sum + sketch.increment(keys[events[i]])) | 0;
  return sum;
}

function mapStrings(
  map: Map<string, number>,
  keys: readonly string[],
  events: Int32Array,
  count: number,
): number {
  let sum = 0;
  for (let i = 0; i < count; i++) {
    const key = keys[events[i]];
    const value = (map.get(key) ?? 0) + 1;
    map.set(key, value);
    sum = (sum + value) | 0;
  }
  return sum;
}

function hashInts(hasher: KeyHasher, keys: Int32Array, count: number): number {
  let sum = 0;
  for (let i = 0, j = 0; i < count; i++) {
    hasher.hash(keys[j]);
    sum = (sum + hasher.h1) | 0;
    if (++j === keys.length) j = 0;
  }
  return sum;
}

function hashStrings(hasher: KeyHasher, keys: readonly string[], count: number): number {
  let sum = 0;
  for (let i = 0, j = 0; i < count; i++) {
    hasher.hash(keys[j]);
    sum = (sum + hasher.h1) | 0;
    if (++j === keys.length) j = 0;
  }
  return sum;
}

// ---- Competitors: state made and warmed once, kept across rounds; time the loop only. ----

const DEFAULT = `default ${DEFAULT_WIDTH}x${DEFAULT_DEPTH}`;

function newHasher(): KeyHasher {
  const [k0, k1] = hashKeyWords(randomSecret());
  return new KeyHasher(k0, k1);
}

function timed(loop: () => number): number {
  const start = nowNs();
  const result = loop();
  const elapsed = nowNs() - start;
  consume(result);
  return elapsed;
}

export function sketchIntsCompetitor(
  name: string,
  sketch: CountMinSketch,
  keys: Int32Array,
  events: Int32Array,
) {
  return {
    name,
    run: (count: number): number => timed(() => sketchInts(sketch, keys, events, count)),
  } satisfies Competitor;
}

/**
 * The engine's exported update called alone, as bare as a call from JS can be: the function
 * held in a local, no checks, no dispatch on the key's kind. What `sketch.increment` adds over
 * it is all that the JS wrapper costs (issue 22). Reaches into the sketch's privates: a bench
 * may, the API must not.
 */
function exportCompetitor(name: string, keys: Int32Array, events: Int32Array) {
  const sketch = new CountMinSketch();
  const engine = (sketch as unknown as { wasm: { exports: Record<string, unknown> } }).wasm;
  const addNumber = engine.exports.addNumber as (key: number, delta: number) => number;
  const loop = (count: number) => {
    let sum = 0;
    for (let i = 0; i < count; i++) sum = (sum + addNumber(keys[events[i]], 1)) | 0;
    return sum;
  };
  return { name, run: (count: number) => timed(() => loop(count)) } satisfies Competitor;
}

function inOrderCompetitors(keys: Int32Array): Competitor[] {
  const sketch = new CountMinSketch();
  const map = new Map<number, number>();
  for (const key of keys) map.set(key, 0);
  return [
    {
      name: 'sketch, keys in order',
      run: (count: number): number => timed(() => sketchIntsInOrder(sketch, keys, count)),
    },
    {
      name: 'Map, keys in order',
      run: (count: number): number => timed(() => mapIntsInOrder(map, keys, count)),
    },
  ];
}

/**
 * incrementMany over keys already in an Int32Array, 1024 at a time (subarrays, no gathering):
 * a stream whose keys arrive in batches. The same events as the others, laid out beforehand.
 */
function batchInPlaceCompetitor(name: string, keys: Int32Array, events: Int32Array) {
  const sketch = new CountMinSketch();
  const laidOut = Int32Array.from(events, (event) => keys[event]);
  const out = new Int32Array(1024);
  return {
    name,
    run: (count: number): number =>
      timed(() => {
        let sum = 0;
        for (let start = 0; start < count; start += 1024) {
          const end = Math.min(count, start + 1024);
          sum = (sum + sketch.incrementMany(laidOut.subarray(start, end), 1, out)[0]) | 0;
        }
        return sum;
      }),
  } satisfies Competitor;
}

function batchCompetitor(name: string, keys: Int32Array, events: Int32Array) {
  const sketch = new CountMinSketch();
  const batch = new Int32Array(1024);
  const out = new Int32Array(1024);
  return {
    name,
    run: (count: number): number =>
      timed(() => sketchBatches(sketch, keys, events, count, batch, out)),
  } satisfies Competitor;
}

/** A Map that already holds every key: the steady state of an exact count. */
export function mapIntsCompetitor(name: string, keys: Int32Array, events: Int32Array) {
  const map = new Map<number, number>();
  for (const key of keys) map.set(key, 0);
  return {
    name,
    run: (count: number): number => timed(() => mapInts(map, keys, events, count)),
  } satisfies Competitor;
}

function floorKeyedCompetitor(name: string, keys: Int32Array, events: Int32Array) {
  const [k0, k1] = hashKeyWords(randomSecret());
  const cells = new Int32Array(DEFAULT_WIDTH * DEFAULT_DEPTH);
  return {
    name,
    run: (count: number): number =>
      timed(() => floorKeyed(k0, k1, cells, DEFAULT_WIDTH, DEFAULT_DEPTH, keys, events, count)),
  } satisfies Competitor;
}

function floorUnkeyedCompetitor(name: string, keys: Int32Array, events: Int32Array) {
  const cells = new Int32Array(DEFAULT_WIDTH * DEFAULT_DEPTH);
  return {
    name,
    run: (count: number): number =>
      timed(() => floorUnkeyed(cells, DEFAULT_WIDTH, DEFAULT_DEPTH, keys, events, count)),
  } satisfies Competitor;
}

function gatherIntsCompetitor(name: string, keys: Int32Array, events: Int32Array) {
  return {
    name,
    run: (count: number): number => timed(() => gatherInts(keys, events, count)),
  } satisfies Competitor;
}

function gatherStringsCompetitor(name: string, keys: string[], events: Int32Array) {
  return {
    name,
    run: (count: number): number => timed(() => gatherStrings(keys, events, count)),
  } satisfies Competitor;
}

function bloomCompetitor(name: string, keys: Int32Array, events: Int32Array) {
  const sketch = new BfCms(2048, 4);
  return {
    name,
    run: (count: number): number => timed(() => bloomInts(sketch, keys, events, count)),
  } satisfies Competitor;
}

function sketchStringsCompetitor(
  name: string,
  sketch: CountMinSketch,
  keys: string[],
  events: Int32Array,
) {
  return {
    name,
    run: (count: number): number => timed(() => sketchStrings(sketch, keys, events, count)),
  } satisfies Competitor;
}

function mapStringsCompetitor(name: string, keys: string[], events: Int32Array) {
  const map = new Map<string, number>();
  for (const key of keys) map.set(key, 0);
  return {
    name,
    run: (count: number): number => timed(() => mapStrings(map, keys, events, count)),
  } satisfies Competitor;
}

function hashIntsCompetitor(name: string, keys: Int32Array) {
  const hasher = newHasher();
  return {
    name,
    run: (count: number): number => timed(() => hashInts(hasher, keys, count)),
  } satisfies Competitor;
}

function hashStringsCompetitor(name: string, keys: string[]) {
  const hasher = newHasher();
  return {
    name,
    run: (count: number): number => timed(() => hashStrings(hasher, keys, count)),
  } satisfies Competitor;
}

// ---- The suite. ----

/** "slowest / fastest" of one competitor's rounds. */
function spreadOf(rounds: readonly number[]): number {
  return Math.max(...rounds) / Math.min(...rounds);
}

function spreadNote(rounds: readonly number[]): string {
  return `spread ${formatRatio(spreadOf(rounds))}`;
}

function fasterRow(
  label: string,
  target: number | null,
  ours: number[],
  theirs: number[],
  ourName: string,
  theirName: string,
): Row {
  const ratio = medianRatio(theirs, ours);
  return {
    case: label,
    measured:
      `${formatRatio(ratio)} faster (runs ${formatRange(ratiosOf(theirs, ours), formatRatio)}; ` +
      `${ourName} ${formatNs(median(ours))}/event, ${spreadNote(ours)}; ${theirName} ` +
      `${formatNs(median(theirs))}/event, ${spreadNote(theirs)})`,
    target: target === null ? 'report only' : `>= ${target}x faster`,
    met: target === null ? null : ratio >= target,
  };
}

/** A "this costs at most N times that" row. */
/** ours' time against base's, within rounds; `target` null for a row that reports only. */
function costRow(
  label: string,
  target: number | null,
  ours: number[],
  base: number[],
  ourName: string,
  baseName: string,
): Row {
  const ratio = medianRatio(ours, base);
  return {
    case: label,
    measured:
      `${formatRatio(ratio)} its time (runs ${formatRange(ratiosOf(ours, base), formatRatio)}; ` +
      `${ourName} ${formatNs(median(ours))}/event, ${spreadNote(ours)}; ${baseName} ` +
      `${formatNs(median(base))}/event, ${spreadNote(base)})`,
    target: target === null ? 'report only' : `<= ${target}x its time`,
    met: target === null ? null : ratio <= target,
  };
}

export async function incrementSuite(options: BenchOptions): Promise<Row[]> {
  const { events: eventCount, runs, log } = options;
  const rows: Row[] = [];
  const spreads: { name: string; spread: number }[] = [];
  const keep = (name: string, rounds: number[]) => spreads.push({ name, spread: spreadOf(rounds) });

  log(`  generating ${formatCount(KEY_COUNT)} keys and ${formatCount(eventCount)} events`);
  const prng = new Prng(SEED);
  const keys = intKeys(KEY_COUNT, prng);
  const events = uniformEvents(eventCount, KEY_COUNT, prng);
  const strings = stringKeys(KEY_COUNT, new Prng(SEED + 1));
  const warmupOperations = 200_000;

  // Cases 1-3 and 6: integer keys, every competitor in one rotation.
  log(`  cases 1-3, 6: integer keys, ${formatCount(eventCount)} events per run`);
  const ints = rotate(
    [
      mapIntsCompetitor('Map', keys, events),
      sketchIntsCompetitor('sketch', new CountMinSketch(), keys, events),
      sketchIntsCompetitor('sketch, js engine', new CountMinSketch({ engine: 'js' }), keys, events),
      sketchIntsCompetitor(
        'conservative',
        new CountMinSketch({ conservative: true }),
        keys,
        events,
      ),
      batchCompetitor('incrementMany', keys, events),
      batchInPlaceCompetitor('incrementMany, keys in place', keys, events),
      floorKeyedCompetitor('floor', keys, events),
      floorUnkeyedCompetitor('unkeyed floor', keys, events),
      exportCompetitor('the exported call alone', keys, events),
      gatherIntsCompetitor('reading the keys', keys, events),
      ...inOrderCompetitors(keys),
    ],
    { operations: eventCount, warmupOperations, runs, log },
  );
  const map = roundsOf(ints, 'Map');
  const sketch = roundsOf(ints, 'sketch');
  const jsEngine = roundsOf(ints, 'sketch, js engine');
  const conservative = roundsOf(ints, 'conservative');
  const batches = roundsOf(ints, 'incrementMany');
  const inPlace = roundsOf(ints, 'incrementMany, keys in place');
  const floor = roundsOf(ints, 'floor');
  const unkeyed = roundsOf(ints, 'unkeyed floor');
  const gather = roundsOf(ints, 'reading the keys');
  const bare = roundsOf(ints, 'the exported call alone');
  const inOrder = roundsOf(ints, 'sketch, keys in order');
  const mapInOrder = roundsOf(ints, 'Map, keys in order');
  for (const [name, rounds] of ints) {
    const part = name === 'reading the keys' || name === 'the exported call alone';
    if (!part && !name.endsWith('in order') && !name.endsWith('in place')) {
      keep(`${name} (integer keys)`, rounds);
    }
  }
  rows.push(
    fasterRow(
      `1. increment, integer keys, sketch ${DEFAULT} (WebAssembly engine) vs Map<number, number>`,
      8,
      sketch,
      map,
      'sketch',
      'Map',
    ),
    fasterRow(
      '1b. the same on the JS engine (engine: "js", the reference) vs Map<number, number>',
      null,
      jsEngine,
      map,
      'JS engine',
      'Map',
    ),
    costRow(
      `2. increment, integer keys, ${DEFAULT}: sketch vs the JS floor (inline HalfSipHash rounds, bare Int32Array, no class or call)`,
      0.6,
      sketch,
      floor,
      'sketch',
      'floor',
    ),
    costRow(
      "2b. what the JS wrapper adds: sketch.increment vs the engine's exported update called alone (same keys, held in a local, no checks)",
      null,
      sketch,
      bare,
      'sketch',
      'exported call',
    ),
    fasterRow(
      '3. incrementMany(Int32Array), batches of 1024 (keys gathered into the batch inside the timing) vs the Map loop',
      20,
      batches,
      map,
      'incrementMany',
      'Map',
    ),
    fasterRow(
      '3b. incrementMany over keys already laid out in an Int32Array (subarrays of 1024, no gathering) vs the Map loop',
      null,
      inPlace,
      map,
      'incrementMany',
      'Map',
    ),
    costRow(
      `6. conservative increment vs plain increment, ${DEFAULT}`,
      1.3,
      conservative,
      sketch,
      'conservative',
      'plain',
    ),
    {
      case: "what every competitor pays before it counts, integer keys: reading each event's key (keys[events[i]], random over 1M)",
      measured:
        `${formatNs(median(gather))}/event (runs ${formatRange(gather, formatNs)}); without it ` +
        `the sketch takes ${formatNs(median(sketch) - median(gather))}, incrementMany ` +
        `${formatNs(median(batches) - median(gather))} and Map ${formatNs(median(map) - median(gather))} per event`,
      target: 'report only',
      met: null,
    },
    fasterRow(
      `1c. why case 1 misses: the same sketch and Map over the same keys in stored order (each key's load foreseen, so no wait for a random key before the hash starts)`,
      null,
      inOrder,
      mapInOrder,
      'sketch',
      'Map',
    ),
    {
      case: `the price of the secret, ${DEFAULT}: keyed JS floor vs unkeyed JS floor (multiply-xorshift)`,
      measured:
        `keyed floor ${formatRatio(medianRatio(floor, unkeyed))} the unkeyed floor's time, ` +
        `sketch ${formatRatio(medianRatio(sketch, unkeyed))} (unkeyed ` +
        `${formatNs(median(unkeyed))}/event, keyed floor ${formatNs(median(floor))}/event)`,
      target: 'report only',
      met: null,
    },
  );

  // Case 4: bloom-filters, on the first 1M events only.
  const bloomEvents = Math.min(BLOOM_EVENTS, eventCount);
  log(`  case 4: bloom-filters CountMinSketch, ${formatCount(bloomEvents)} events per run`);
  const bloom = rotate(
    [
      sketchIntsCompetitor(
        'sketch 2048x4',
        new CountMinSketch({ width: 2048, depth: 4 }),
        keys,
        events,
      ),
      bloomCompetitor('bloom-filters 2048x4', keys, events),
    ],
    { operations: bloomEvents, warmupOperations: 20_000, runs, log },
  );
  keep('sketch 2048x4 (bloom-filters case)', roundsOf(bloom, 'sketch 2048x4'));
  rows.push(
    fasterRow(
      `4. increment, integer keys: sketch 2048x4 vs bloom-filters CountMinSketch(2048, 4) ` +
        `(${formatCount(bloomEvents)} events; it hashes strings, so it gets String(key))`,
      300,
      roundsOf(bloom, 'sketch 2048x4'),
      roundsOf(bloom, 'bloom-filters 2048x4'),
      'sketch',
      'bloom-filters',
    ),
  );

  // Case 5: string keys.
  log(`  case 5: string keys (${strings[0]}), ${formatCount(eventCount)} events per run`);
  const str = rotate(
    [
      mapStringsCompetitor('Map', strings, events),
      sketchStringsCompetitor('sketch', new CountMinSketch(), strings, events),
      sketchStringsCompetitor(
        'sketch, js engine',
        new CountMinSketch({ engine: 'js' }),
        strings,
        events,
      ),
      gatherStringsCompetitor('reading the keys', strings, events),
    ],
    { operations: eventCount, warmupOperations, runs, log },
  );
  for (const [name, rounds] of str) {
    if (name !== 'reading the keys') keep(`${name} (string keys)`, rounds);
  }
  const averageLength = strings.reduce((sum, s) => sum + s.length, 0) / strings.length;
  const stringsLabel = `${formatCount(KEY_COUNT)} distinct ${averageLength.toFixed(0)}-char string keys`;
  rows.push(
    fasterRow(
      `5. increment, ${stringsLabel}: sketch ${DEFAULT} vs Map<string, number>`,
      2,
      roundsOf(str, 'sketch'),
      roundsOf(str, 'Map'),
      'sketch',
      'Map',
    ),
    fasterRow(
      `5b. the same on the JS engine vs Map<string, number>`,
      null,
      roundsOf(str, 'sketch, js engine'),
      roundsOf(str, 'Map'),
      'JS engine',
      'Map',
    ),
    {
      case: "what every competitor pays before it counts, string keys: reading each event's string (its length and first character)",
      measured:
        `${formatNs(median(roundsOf(str, 'reading the keys')))}/event (runs ` +
        `${formatRange(roundsOf(str, 'reading the keys'), formatNs)})`,
      target: 'report only',
      met: null,
    },
  );

  // Case 7: the hash alone.
  log(`  case 7: KeyHasher.hash, ${formatCount(HASH_OPERATIONS)} hashes per run`);
  const hashPrng = new Prng(SEED + 7);
  const lengths = [8, 32, 128];
  const hashCompetitors: Competitor[] = [hashIntsCompetitor('integer', keys)];
  for (const length of lengths) {
    hashCompetitors.push(
      hashStringsCompetitor(`string(${length})`, randomStrings(HASH_STRINGS, length, hashPrng)),
    );
  }
  const hashes = rotate(hashCompetitors, {
    operations: HASH_OPERATIONS,
    warmupOperations,
    runs,
    log,
  });
  for (const competitor of hashCompetitors) {
    rows.push({
      case: `7. ns per hash: KeyHasher.hash (the JS reference), ${competitor.name} key`,
      measured:
        `${formatNs(median(roundsOf(hashes, competitor.name)))}/hash (runs ` +
        `${formatRange(roundsOf(hashes, competitor.name), formatNs)})`,
      target: 'report only',
      met: null,
    });
  }

  // The target is on hotcount's own cases; the peers' and the floors' spreads are listed too.
  const ours = spreads.filter(({ name }) => /^(sketch|conservative|incrementMany)/.test(name));
  const worst = ours.reduce((a, b) => (b.spread > a.spread ? b : a));
  rows.push({
    case: "spread of rounds (slowest / fastest round of one competitor), worst of hotcount's cases 1-6",
    measured:
      `${formatRatio(worst.spread)} (${worst.name}); ` +
      spreads.map(({ name, spread }) => `${name} ${formatRatio(spread)}`).join(', '),
    target: '<= 1.3x',
    met: worst.spread <= 1.3,
  });
  return rows;
}
