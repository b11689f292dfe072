/**
 * One memory measurement, in a process of its own: `node --expose-gc memory-child.js <case>
 * <events>`. Prints one JSON line (a `MemorySample`) on stdout.
 *
 * The process builds the integer keys of the seed workload, warms the case's loop up on a
 * throwaway structure (so that compiled code and feedback do not count as the structure's
 * memory), collects garbage, takes a baseline, builds the structure, feeds it the events,
 * collects garbage again and reports the growth. The events are drawn on the fly from the same
 * generator, in the same order, as the timed suite's event array, so the stream is identical
 * without a 40 MB (400 MB with --full) array inflating the peak RSS.
 *
 * memory.ts imports only this file's types (erased), never the file itself.
 */
import { CountMinSketch } from '../src/index.js';
import { Prng } from './prng.js';
import { intKeys, KEY_COUNT, SEED } from './workload.js';

const MEMORY_CASES = ['baseline', 'sketch 2048x4', 'sketch default', 'Map'] as const;
/** `baseline` builds the keys only: what every other case's process holds besides its structure. */
export type MemoryCase = (typeof MEMORY_CASES)[number];

export interface MemorySample {
  case: MemoryCase;
  /** Growth of heapUsed, after a full collection, from baseline to the fed structure. */
  heapUsedBytes: number;
  /** Growth of `external` (which includes `arrayBuffers`: typed arrays' backing stores). */
  externalBytes: number;
  /** Growth of `arrayBuffers`. */
  arrayBuffersBytes: number;
  /** Peak resident set of the whole process (process.resourceUsage().maxRSS), bytes. */
  maxRssBytes: number;
  checksum: number;
}

const WARMUP_EVENTS = 100_000;
const WARMUP_ROUNDS = 3;

interface Snapshot {
  heapUsed: number;
  external: number;
  arrayBuffers: number;
}

function snapshot(gc: () => void): Snapshot {
  gc();
  gc();
  const { heapUsed, external, arrayBuffers } = process.memoryUsage();
  return { heapUsed, external, arrayBuffers };
}

function feedSketch(sketch: CountMinSketch, keys: Int32Array, prng: Prng, count: number): number {
  let sum = 0;
  for (let i = 0; i < count; i++) sum = (sum + sketch.increment(keys[prng.below(keys.length)])) | 0;
  return sum;
}

function feedMap(map: Map<number, number>, keys: Int32Array, prng: Prng, count: number): number {
  let sum = 0;
  for (let i = 0; i < count; i++) {
    const key = keys[prng.below(keys.length)];
    const value = (map.get(key) ?? 0) + 1;
    map.set(key, value);
    sum = (sum + value) | 0;
  }
  return sum;
}

function createSketch(which: MemoryCase): CountMinSketch {
  return which === 'sketch 2048x4'
    ? new CountMinSketch({ width: 2048, depth: 4 })
    : new CountMinSketch();
}

/**
 * Builds the case's structure and feeds it `events` events. In a function of its own, so that
 * no temporary of the caller's frame keeps a structure alive by accident (a warm-up structure
 * left in an interpreter register would be counted in the baseline).
 */
function build(
  which: MemoryCase,
  keys: Int32Array,
  prng: Prng,
  events: number,
): { structure: CountMinSketch | Map<number, number> | null; checksum: number } {
  if (which === 'baseline') return { structure: null, checksum: 0 };
  if (which === 'Map') {
    const map = new Map<number, number>();
    return { structure: map, checksum: feedMap(map, keys, prng, events) };
  }
  const sketch = createSketch(which);
  return { structure: sketch, checksum: feedSketch(sketch, keys, prng, events) };
}

/**
 * Runs the case's loop on throwaway structures, on a stream of its own, until it is optimized,
 * so that compiled code is in place before the baseline. Returns only a checksum: nothing of
 * the throwaway structures outlives this call.
 */
function warmUp(which: MemoryCase, keys: Int32Array): number {
  const prng = new Prng(SEED + 2);
  let checksum = 0;
  for (let i = 0; i < WARMUP_ROUNDS; i++)
    checksum += build(which, keys, prng, WARMUP_EVENTS).checksum;
  return checksum;
}

function main(): void {
  const which = process.argv[2] as MemoryCase;
  const events = Number(process.argv[3]);
  if (!MEMORY_CASES.includes(which)) {
    throw new RangeError(`case must be one of ${MEMORY_CASES.join(', ')}; got ${which}`);
  }
  if (!Number.isSafeInteger(events) || events < 1) {
    throw new RangeError(`events must be a positive integer; got ${process.argv[3]}`);
  }
  const gc = globalThis.gc;
  if (typeof gc !== 'function') throw new TypeError('run with node --expose-gc');

  const prng = new Prng(SEED);
  const keys = intKeys(KEY_COUNT, prng);
  let checksum = warmUp(which, keys);

  const before = snapshot(gc);
  const built = build(which, keys, prng, events);
  const after = snapshot(gc);
  checksum += built.checksum;
  // Read the structure after the snapshot, so that it is certainly alive when measured.
  const structure = built.structure;
  if (structure instanceof Map) checksum += structure.size;
  else if (structure !== null) checksum += structure.estimate(keys[0]);

  const sample: MemorySample = {
    case: which,
    heapUsedBytes: after.heapUsed - before.heapUsed,
    externalBytes: after.external - before.external,
    arrayBuffersBytes: after.arrayBuffers - before.arrayBuffers,
    maxRssBytes: process.resourceUsage().maxRSS * 1024,
    checksum: checksum | 0,
  };
  process.stdout.write(`${JSON.stringify(sample)}\n`);
}

main();
