/**
 * Memory by thread count, in a process of its own: `node --expose-gc shared-memory-child.js
 * <mode> <threads> <events>`, mode "shared sketch" or "Map per thread". Prints one JSON line
 * (a `MemoryReport`).
 *
 * The main thread creates the shared sketch (default 16384 x 4) and starts `threads` workers
 * (this file again). Each worker builds the seed workload's keys and its share of the events,
 * sets up its structure (attaches the sketch, or creates its Map), warms its loop up on a
 * throwaway structure, collects garbage and takes a baseline; then all feed at once, collect
 * garbage again and report the growth of their heap (heapUsed + external). The figure the
 * suite judges is the growth of the whole process's resident set over the feeding: it counts
 * every thread, and the pages of the sketch's shared memory (allocated once, in the main
 * thread) as they are first written.
 */
import { fileURLToPath } from 'node:url';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { CountMinSketch, type SketchHandle } from '../src/index.js';
import { Prng } from './prng.js';
import { intKeys, KEY_COUNT, SEED, uniformEvents } from './workload.js';

type Mode = 'shared sketch' | 'Map per thread';

export interface MemoryReport {
  mode: Mode;
  threads: number;
  /** Shared memory of the sketch (0 for Maps): one allocation for all threads. */
  sketchBytes: number;
  /** Sum over workers of heap growth from feeding, plus `sketchBytes`. */
  structureBytes: number;
  /** Growth of the process's resident set over the feeding. */
  rssGrowthBytes: number;
  checksum: number;
}

interface Setup {
  mode: Mode;
  handle: SketchHandle | undefined;
  events: number;
  seed: number;
  start: Int32Array;
}

function gcTwice(): void {
  const gc = globalThis.gc as () => void;
  gc();
  gc();
}

function heap(): number {
  const { heapUsed, external } = process.memoryUsage();
  return heapUsed + external;
}

function feedSketch(sketch: CountMinSketch, keys: Int32Array, events: Int32Array): number {
  let sum = 0;
  for (let i = 0; i < events.length; i++) sum = (sum + sketch.increment(keys[events[i]])) | 0;
  return sum;
}

function feedMap(map: Map<number, number>, keys: Int32Array, events: Int32Array): number {
  let sum = 0;
  for (let i = 0; i < events.length; i++) {
    const key = keys[events[i]];
    const value = (map.get(key) ?? 0) + 1;
    map.set(key, value);
    sum = (sum + value) | 0;
  }
  return sum;
}

function worker(setup: Setup): void {
  const keys = intKeys(KEY_COUNT, new Prng(SEED));
  const events = uniformEvents(setup.events, KEY_COUNT, new Prng(setup.seed));
  const warm = events.subarray(0, Math.min(events.length, 100_000));
  let checksum = 0;
  let feed: () => number;
  if (setup.mode === 'shared sketch') {
    const sketch = CountMinSketch.attach(setup.handle as SketchHandle);
    const handle = new CountMinSketch({ width: 1024, depth: 4, shared: true }).handle;
    for (let i = 0; i < 3; i++) checksum += feedSketch(CountMinSketch.attach(handle), keys, warm);
    feed = () => feedSketch(sketch, keys, events);
  } else {
    const map = new Map<number, number>();
    for (let i = 0; i < 3; i++) checksum += feedMap(new Map(), keys, warm);
    feed = () => feedMap(map, keys, events) + map.size;
  }
  gcTwice();
  const before = heap();
  parentPort?.postMessage({ ready: true });
  Atomics.wait(setup.start, 0, 0);
  checksum += feed();
  gcTwice();
  parentPort?.postMessage({ growth: heap() - before, checksum });
  // Stay alive (and keep the structure alive) until the main thread has read the RSS.
  Atomics.wait(setup.start, 0, 1);
}

async function main(): Promise<void> {
  const [mode, threadsText, eventsText] = process.argv.slice(2) as [Mode, string, string];
  const threads = Number(threadsText);
  const events = Number(eventsText);
  if (mode !== 'shared sketch' && mode !== 'Map per thread') throw new RangeError(`mode ${mode}`);
  const sketch = mode === 'shared sketch' ? new CountMinSketch({ shared: true }) : undefined;
  const start = new Int32Array(new SharedArrayBuffer(4));
  const file = fileURLToPath(import.meta.url);
  const workers = Array.from({ length: threads }, (_, i) => {
    const setup: Setup = {
      mode,
      handle: sketch?.handle,
      events: Math.floor(events / threads),
      seed: SEED + 20 + i,
      start,
    };
    return new Worker(file, { workerData: setup }); // --expose-gc is process-wide: gc is there too
  });
  const messages = workers.map((w) => {
    const queue: unknown[] = [];
    const waiting: ((m: unknown) => void)[] = [];
    w.on('message', (m) => {
      const next = waiting.shift();
      if (next) next(m);
      else queue.push(m);
    });
    return () =>
      new Promise<unknown>((resolve) => {
        if (queue.length > 0) resolve(queue.shift());
        else waiting.push(resolve);
      });
  });
  await Promise.all(messages.map((next) => next()));
  gcTwice();
  const rssBefore = process.memoryUsage.rss();
  Atomics.store(start, 0, 1);
  Atomics.notify(start, 0);
  const results = (await Promise.all(messages.map((next) => next()))) as {
    growth: number;
    checksum: number;
  }[];
  const rssGrowthBytes = process.memoryUsage.rss() - rssBefore;
  Atomics.store(start, 0, 2);
  Atomics.notify(start, 0);
  await Promise.all(workers.map((w) => w.terminate()));
  const sketchBytes = sketch?.memoryBytes ?? 0;
  const report: MemoryReport = {
    mode,
    threads,
    sketchBytes,
    structureBytes: sketchBytes + results.reduce((sum, r) => sum + r.growth, 0),
    rssGrowthBytes,
    checksum: results.reduce((sum, r) => (sum + r.checksum) | 0, 0),
  };
  process.stdout.write(`${JSON.stringify(report)}\n`);
}

if (isMainThread) await main();
else worker(workerData as Setup);
