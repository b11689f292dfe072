/**
 * The worker side of bench/shared.ts. Each worker is a V8 isolate of its own, so each competitor
 * runs monomorphic code, compiled for it alone, whatever else the benchmark runs.
 *
 * Roles (workerData.role):
 * - `increment`: one thread, alone; times `increment` on a local sketch, a shared sketch (on
 *   either engine), or the atomic floor (the same hash and index arithmetic with a blind
 *   `Atomics.add` per row: what a shared update would cost if a blind add could saturate; it
 *   cannot). The sketch or cells are made once and kept across runs.
 * - `feeder`: attached to a shared sketch (with `foldEvery`, if given); times its share of the
 *   events, after a start line shared with the other feeders, and reports when it started and
 *   ended. A folding feeder's time includes its last fold, so that everything it counted is in
 *   the shared cells when it reports.
 * - `producer`: sends its events to the main thread in batches of `batch` keys (postMessage,
 *   the buffer transferred), after the start line, for the Map competitor.
 * - `pingpong`: two workers hand one shared word back and forth `count` times: the time of a
 *   handoff is what moving a written cache line from one core to the other costs here.
 * - `limiter-feeder`: attached to a shared RateLimiter (bench/limits.ts); times `check` over
 *   the seed workload's client addresses, after the start line, as `feeder` does.
 *
 * Every worker generates the seed workload's keys (the same in every worker) and its own
 * uniform events, before timing. Messages: main -> worker `{ count, line }` runs once (after the
 * start line reaches `line`, for feeders and producers); worker -> main
 * `{ ready }`, then one result per run.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { KeyHasher } from '../src/hash/key-hasher.js';
import { hashKeyWords, randomSecret } from '../src/hash/secret.js';
import {
  CountMinSketch,
  RateLimiter,
  type RateLimiterHandle,
  type SketchHandle,
} from '../src/index.js';
import { Prng } from './prng.js';
import { intKeys, ipKeys, KEY_COUNT, SEED, uniformEvents } from './workload.js';

export type WorkerRole =
  | { role: 'increment'; kind: IncrementKind; width: number; depth: number }
  | { role: 'feeder'; handle: SketchHandle; start: Int32Array; foldEvery?: number }
  | { role: 'producer'; start: Int32Array; batch: number }
  | { role: 'pingpong'; start: Int32Array; cell: Int32Array; side: 0 | 1 }
  | { role: 'limiter-feeder'; handle: RateLimiterHandle; start: Int32Array };

/**
 * What an `increment` worker times: a local or shared sketch on the default (WebAssembly)
 * engine, a shared sketch on the JS engine (the shared path before the engine), or the atomic
 * floor.
 */
export type IncrementKind = 'local' | 'shared' | 'shared, js engine' | 'atomic floor';

export type WorkerSetup = WorkerRole & { events: number; seed: number };

export interface RunResult {
  /** Nanoseconds the timed loop took (increment), or 0. */
  ns: number;
  /** Start and end of the timed loop, ms since the epoch (performance.timeOrigin based). */
  startMs: number;
  endMs: number;
  checksum: number;
}

const INV_2_32 = 1 / 4294967296;
const setup = workerData as WorkerSetup;
const prng = new Prng(SEED);
const keys = intKeys(KEY_COUNT, prng);
const events = uniformEvents(setup.events, KEY_COUNT, new Prng(setup.seed));

function sketchLoop(sketch: CountMinSketch, count: number): number {
  let sum = 0;
  for (let i = 0; i < count; i++) sum = (sum + sketch.increment(keys[events[i]])) | 0;
  return sum;
}

/** Client addresses, for limiter feeders only. */
const addresses = setup.role === 'limiter-feeder' ? ipKeys(KEY_COUNT, new Prng(SEED)) : [];

function limiterLoop(limiter: RateLimiter, count: number): number {
  let sum = 0;
  for (let i = 0; i < count; i++) sum = (sum + limiter.check(addresses[events[i]]).remaining) | 0;
  return sum;
}

function atomicFloor(
  hasher: KeyHasher,
  cells: Int32Array,
  width: number,
  depth: number,
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
      const value = Atomics.add(cells, r * width + ((g * width * INV_2_32) | 0), 1) + 1;
      if (value < min) min = value;
    }
    sum = (sum + min) | 0;
  }
  return sum;
}

function now(): number {
  return performance.timeOrigin + performance.now();
}

/** Waits until the main thread raises the start line to `line`. */
function startLine(start: Int32Array, line: number): void {
  for (;;) {
    const at = Atomics.load(start, 0);
    if (at >= line) return;
    Atomics.wait(start, 0, at);
  }
}

let counted: CountMinSketch | undefined;
let floorCells: Int32Array | undefined;
const floorHasher = new KeyHasher(...hashKeyWords(randomSecret()));

function incrementRun(role: Extract<WorkerRole, { role: 'increment' }>, count: number): RunResult {
  const { width, depth } = role;
  const startMs = now();
  if (role.kind === 'atomic floor') {
    floorCells ??= new Int32Array(new SharedArrayBuffer(4 * width * depth));
    const t = process.hrtime.bigint();
    return result(t, startMs, atomicFloor(floorHasher, floorCells, width, depth, count));
  }
  counted ??= new CountMinSketch({
    width,
    depth,
    shared: role.kind !== 'local',
    engine: role.kind === 'shared, js engine' ? 'js' : undefined,
  });
  const t = process.hrtime.bigint();
  return result(t, startMs, sketchLoop(counted, count));
}

function result(t: bigint, startMs: number, checksum: number): RunResult {
  const ns = Number(process.hrtime.bigint() - t);
  return { ns, startMs, endMs: now(), checksum };
}

let sketch: CountMinSketch | undefined;
let limiter: RateLimiter | undefined;

function run(count: number, line: number): RunResult {
  const role = setup as WorkerRole;
  if (role.role === 'increment') return incrementRun(role, count);
  if (role.role === 'feeder') {
    sketch ??= CountMinSketch.attach(
      role.handle,
      role.foldEvery === undefined ? {} : { foldEvery: role.foldEvery },
    );
    startLine(role.start, line);
    const startMs = now();
    const t = process.hrtime.bigint();
    const checksum = sketchLoop(sketch, count);
    sketch.fold();
    return result(t, startMs, checksum);
  }
  if (role.role === 'limiter-feeder') {
    limiter ??= RateLimiter.attach(role.handle);
    startLine(role.start, line);
    const startMs = now();
    const t = process.hrtime.bigint();
    return result(t, startMs, limiterLoop(limiter, count));
  }
  if (role.role === 'pingpong') {
    startLine(role.start, line);
    const startMs = now();
    const t = process.hrtime.bigint();
    const cell = role.cell;
    for (let i = 0; i < count; i++) {
      const mine = 2 * i + role.side;
      while (Atomics.load(cell, 0) !== mine) {}
      Atomics.store(cell, 0, mine + 1);
    }
    return result(t, startMs, count);
  }
  startLine(role.start, line);
  const startMs = now();
  const t = process.hrtime.bigint();
  let checksum = 0;
  for (let i = 0; i < count; i += role.batch) {
    const batch = new Int32Array(Math.min(role.batch, count - i));
    for (let j = 0; j < batch.length; j++) batch[j] = keys[events[i + j]];
    checksum = (checksum + batch[0]) | 0;
    parentPort?.postMessage(batch, [batch.buffer]);
  }
  return result(t, startMs, checksum);
}

// Warm up, so that every loop is optimized before it is timed.
if (setup.role === 'feeder') {
  // On a throwaway shared sketch: the same classes as the attached one, so the loop stays
  // monomorphic.
  const foldEvery = setup.foldEvery;
  const warm = new CountMinSketch({ width: 1024, depth: 4, shared: true, foldEvery });
  for (let i = 0; i < 3; i++) sketchLoop(warm, 200_000);
  warm.fold();
} else if (setup.role === 'limiter-feeder') {
  const { limit, windowMs } = setup.handle;
  const warm = new RateLimiter({ limit, windowMs, width: 1024, shared: true });
  for (let i = 0; i < 3; i++) limiterLoop(warm, 200_000);
} else if (setup.role === 'increment') {
  for (let i = 0; i < 3; i++) incrementRun(setup, 200_000);
}
parentPort?.on('message', (message: { count: number; line: number }) => {
  parentPort?.postMessage({ result: run(message.count, message.line) });
});
parentPort?.postMessage({ ready: true });
