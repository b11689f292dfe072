/**
 * Speed of `increment` (cases 1-5) and of the keyed hash (case 7).
 *
 * Workload: 1M distinct keys, `options.events` events drawn uniformly over them (see
 * workload.ts). Each competitor's loop is its own function, called with one type of structure
 * and one type of key, so its call sites stay monomorphic; each loop returns a checksum of the
 * values it computed (estimates, counts), which is consumed. Every timed run starts on a fresh
 * structure (a new sketch, Map or counter array) after a full garbage collection.
 *
 * Competitors:
 * - the sketch: `CountMinSketch.increment(key)`, 2048 x 4 and the default 16384 x 4;
 * - `Map`: `m.set(k, (m.get(k) ?? 0) + 1)`, the exact count a sketch replaces;
 * - the floor: the least a keyed Count-Min increment can cost in JS, a dozen inline lines with
 *   the sketch's own hash and index arithmetic over an Int32Array (no saturation, no total, no
 *   argument checks, no classes): what the sketch's structure costs is sketch - floor;
 * - the unkeyed floor: the same loop with a multiply-xorshift hash, so keyed - unkeyed is what
 *   the secret costs;
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

/** The floor: count-min.ts's hash and index arithmetic, inline, over bare Int32Array cells. */
function floorKeyed(
  hasher: KeyHasher,
  cells: Int32Array,
  width: number,
  depth: number,
  keys: Int32Array,
  events: Int32Array,
  count: number,
): number {
  let sum = 0;
  for (let i = 0; i < count; i++) {
    hasher.hashNumber(keys[events[i]]);
    const h1 = hasher.h1;
    const h2 = hasher.h2;
    let min = 0x7fffffff;
    for (let r = 0; r < depth; r++) {
      const g = (h1 + Math.imul(r, h2)) >>> 0;
      const cell = r * width + ((g * width * INV_2_32) | 0);
      const value = ++cells[cell];
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
      const cell = r * width + ((g * width * INV_2_32) | 0);
      const value = ++cells[cell];
      if (value < min) min = value;
    }
    sum = (sum + min) | 0;
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

// ---- Competitors: fresh state per run, time around the loop only. ----

interface Size {
  label: string;
  width: number;
  depth: number;
  create(): CountMinSketch;
}

const SIZES: Size[] = [
  {
    label: '2048x4',
    width: 2048,
    depth: 4,
    create: () => new CountMinSketch({ width: 2048, depth: 4 }),
  },
  {
    label: `default ${DEFAULT_WIDTH}x${DEFAULT_DEPTH}`,
    width: DEFAULT_WIDTH,
    depth: DEFAULT_DEPTH,
    create: () => new CountMinSketch(),
  },
];

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

function sketchIntsCompetitor(name: string, size: Size, keys: Int32Array, events: Int32Array) {
  return {
    name,
    run(count: number): number {
      const sketch = size.create();
      return timed(() => sketchInts(sketch, keys, events, count));
    },
  } satisfies Competitor;
}

function mapIntsCompetitor(name: string, keys: Int32Array, events: Int32Array) {
  return {
    name,
    run(count: number): number {
      const map = new Map<number, number>();
      return timed(() => mapInts(map, keys, events, count));
    },
  } satisfies Competitor;
}

function floorKeyedCompetitor(name: string, size: Size, keys: Int32Array, events: Int32Array) {
  const hasher = newHasher();
  return {
    name,
    run(count: number): number {
      const cells = new Int32Array(size.width * size.depth);
      return timed(() => floorKeyed(hasher, cells, size.width, size.depth, keys, events, count));
    },
  } satisfies Competitor;
}

function floorUnkeyedCompetitor(name: string, size: Size, keys: Int32Array, events: Int32Array) {
  return {
    name,
    run(count: number): number {
      const cells = new Int32Array(size.width * size.depth);
      return timed(() => floorUnkeyed(cells, size.width, size.depth, keys, events, count));
    },
  } satisfies Competitor;
}

function bloomCompetitor(name: string, keys: Int32Array, events: Int32Array) {
  return {
    name,
    run(count: number): number {
      const sketch = new BfCms(2048, 4);
      return timed(() => bloomInts(sketch, keys, events, count));
    },
  } satisfies Competitor;
}

function sketchStringsCompetitor(name: string, size: Size, keys: string[], events: Int32Array) {
  return {
    name,
    run(count: number): number {
      const sketch = size.create();
      return timed(() => sketchStrings(sketch, keys, events, count));
    },
  } satisfies Competitor;
}

function mapStringsCompetitor(name: string, keys: string[], events: Int32Array) {
  return {
    name,
    run(count: number): number {
      const map = new Map<string, number>();
      return timed(() => mapStrings(map, keys, events, count));
    },
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

function fasterRow(
  label: string,
  target: number,
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
      `${ourName} ${formatNs(median(ours))}/event, ${theirName} ${formatNs(median(theirs))}/event)`,
    target: `>= ${target}x faster`,
    met: ratio >= target,
  };
}

export async function incrementSuite(options: BenchOptions): Promise<Row[]> {
  const { events: eventCount, runs, log } = options;
  const rows: Row[] = [];

  log(`  generating ${formatCount(KEY_COUNT)} keys and ${formatCount(eventCount)} events`);
  const prng = new Prng(SEED);
  const keys = intKeys(KEY_COUNT, prng);
  const events = uniformEvents(eventCount, KEY_COUNT, prng);
  const strings = stringKeys(KEY_COUNT, new Prng(SEED + 1));
  const warmupOperations = 200_000;

  // Cases 1-3: integer keys; every competitor of both sizes in one rotation.
  log(`  cases 1-3: integer keys, ${formatCount(eventCount)} events per run`);
  const intCompetitors: Competitor[] = [mapIntsCompetitor('Map', keys, events)];
  for (const size of SIZES) {
    intCompetitors.push(
      sketchIntsCompetitor(`sketch ${size.label}`, size, keys, events),
      floorKeyedCompetitor(`floor ${size.label}`, size, keys, events),
      floorUnkeyedCompetitor(`unkeyed ${size.label}`, size, keys, events),
    );
  }
  const ints = rotate(intCompetitors, { operations: eventCount, warmupOperations, runs, log });
  const map = roundsOf(ints, 'Map');
  for (const size of SIZES) {
    const sketch = roundsOf(ints, `sketch ${size.label}`);
    rows.push(
      fasterRow(
        `1. increment, integer keys: sketch ${size.label} vs Map<number, number>`,
        10,
        sketch,
        map,
        'sketch',
        'Map',
      ),
    );
  }
  for (const size of SIZES) {
    const sketch = roundsOf(ints, `sketch ${size.label}`);
    const floor = roundsOf(ints, `floor ${size.label}`);
    const ratio = medianRatio(sketch, floor);
    rows.push({
      case: `2. increment, integer keys: sketch ${size.label} vs the floor (inline loop, same keyed hash)`,
      measured:
        `${formatRatio(ratio)} the floor's time (runs ` +
        `${formatRange(ratiosOf(sketch, floor), formatRatio)}; sketch ` +
        `${formatNs(median(sketch))}/event, floor ${formatNs(median(floor))}/event)`,
      target: '<= 1.3x',
      met: ratio <= 1.3,
    });
  }
  for (const size of SIZES) {
    const sketch = roundsOf(ints, `sketch ${size.label}`);
    const floor = roundsOf(ints, `floor ${size.label}`);
    const unkeyed = roundsOf(ints, `unkeyed ${size.label}`);
    rows.push({
      case: `3. the price of the secret, ${size.label}: keyed floor vs unkeyed floor (multiply-xorshift)`,
      measured:
        `keyed floor ${formatRatio(medianRatio(floor, unkeyed))} the unkeyed floor's time, ` +
        `sketch ${formatRatio(medianRatio(sketch, unkeyed))} (unkeyed ` +
        `${formatNs(median(unkeyed))}/event, keyed floor ${formatNs(median(floor))}/event)`,
      target: 'report only',
      met: null,
    });
  }

  // Case 4: bloom-filters, on the first 1M events only.
  const bloomEvents = Math.min(BLOOM_EVENTS, eventCount);
  log(`  case 4: bloom-filters CountMinSketch, ${formatCount(bloomEvents)} events per run`);
  const size2048 = SIZES[0];
  const bloom = rotate(
    [
      sketchIntsCompetitor(`sketch ${size2048.label}`, size2048, keys, events),
      bloomCompetitor('bloom-filters 2048x4', keys, events),
    ],
    { operations: bloomEvents, warmupOperations: 20_000, runs, log },
  );
  rows.push(
    fasterRow(
      `4. increment, integer keys: sketch 2048x4 vs bloom-filters CountMinSketch(2048, 4) ` +
        `(${formatCount(bloomEvents)} events; it hashes strings, so it gets String(key))`,
      300,
      roundsOf(bloom, `sketch ${size2048.label}`),
      roundsOf(bloom, 'bloom-filters 2048x4'),
      'sketch',
      'bloom-filters',
    ),
  );

  // Case 5: string keys.
  log(`  case 5: string keys (${strings[0]}), ${formatCount(eventCount)} events per run`);
  const stringCompetitors: Competitor[] = [mapStringsCompetitor('Map', strings, events)];
  for (const size of SIZES) {
    stringCompetitors.push(sketchStringsCompetitor(`sketch ${size.label}`, size, strings, events));
  }
  const str = rotate(stringCompetitors, {
    operations: eventCount,
    warmupOperations,
    runs,
    log,
  });
  const averageLength = strings.reduce((sum, s) => sum + s.length, 0) / strings.length;
  for (const size of SIZES) {
    const sketch = roundsOf(str, `sketch ${size.label}`);
    const mapRounds = roundsOf(str, 'Map');
    const ratio = medianRatio(mapRounds, sketch);
    rows.push({
      case:
        `5. increment, ${formatCount(KEY_COUNT)} distinct ${averageLength.toFixed(0)}-char ` +
        `string keys: sketch ${size.label} vs Map<string, number>`,
      measured:
        `${formatRatio(ratio)} Map's speed (runs ` +
        `${formatRange(ratiosOf(mapRounds, sketch), formatRatio)}; sketch ` +
        `${formatNs(median(sketch))}/event, Map ${formatNs(median(mapRounds))}/event)`,
      target: '>= 1.0x (no slower)',
      met: ratio >= 1,
    });
  }

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
      case: `7. ns per hash: KeyHasher.hash, ${competitor.name} key`,
      measured:
        `${formatNs(median(roundsOf(hashes, competitor.name)))}/hash (runs ` +
        `${formatRange(roundsOf(hashes, competitor.name), formatNs)})`,
      target: 'report only',
      met: null,
    });
  }

  return rows;
}
