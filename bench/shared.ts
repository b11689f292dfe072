/**
 * One sketch shared by worker_threads (issue 4): cost of a shared increment, scaling to two
 * threads, against a Map in the main thread fed by postMessage, and memory by thread count.
 *
 * Every competitor runs in a worker thread of its own (bench/shared-worker.ts), so each is
 * compiled for itself alone; competitors run in rotation, and every ratio is taken within one
 * round, as in measure.ts. Memory is measured in a fresh child process per configuration
 * (shared-memory-child.ts).
 */
import { spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { CountMinSketch } from '../src/index.js';
import {
  type BenchOptions,
  consume,
  formatBytes,
  formatCount,
  formatNs,
  formatRange,
  formatRatio,
  median,
  medianRatio,
  type Row,
  ratiosOf,
} from './measure.js';
import type { MemoryReport } from './shared-memory-child.js';
import type { IncrementKind, RunResult, WorkerSetup } from './shared-worker.js';
import { SEED } from './workload.js';

const WORKER = new URL('./shared-worker.js', import.meta.url);
const MEMORY_CHILD = fileURLToPath(new URL('./shared-memory-child.js', import.meta.url));
const BATCH = 1000;

export interface Runner {
  run(count: number, line?: number): Promise<RunResult>;
  worker: Worker;
  close(): Promise<number>;
}

export async function spawn(setup: WorkerSetup): Promise<Runner> {
  const worker = new Worker(WORKER, { workerData: setup });
  const results: ((result: RunResult) => void)[] = [];
  worker.on('message', (message: unknown) => {
    if (message !== null && typeof message === 'object' && 'result' in message) {
      results.shift()?.((message as { result: RunResult }).result);
    }
  });
  const [ready] = await once(worker, 'message');
  if (!ready?.ready) throw new Error('bench worker did not start');
  return {
    worker,
    run(count, line = 0) {
      return new Promise((resolve) => {
        results.push(resolve);
        worker.postMessage({ count, line });
      });
    },
    close: () => worker.terminate(),
  };
}

/** Raises the start line to `line`: every worker waiting for it starts at once. */
function release(start: Int32Array, line: number): void {
  Atomics.store(start, 0, line);
  Atomics.notify(start, 0);
}

// ---- 1. One thread: shared against local increment. ----

async function incrementCase(options: BenchOptions): Promise<Row[]> {
  const { events, runs, log } = options;
  const sizes = [
    { label: '2048x4', width: 2048, depth: 4 },
    { label: 'default 16384x4', width: 16384, depth: 4 },
  ];
  const rows: Row[] = [];
  for (const size of sizes) {
    log(`  shared vs local increment, ${size.label}, ${formatCount(events)} events per run`);
    const kinds: IncrementKind[] = ['local', 'shared', 'shared, js engine', 'atomic floor'];
    const runners = [];
    for (const kind of kinds) {
      runners.push(
        await spawn({ role: 'increment', kind, ...size, events, seed: SEED + 1 } as WorkerSetup),
      );
    }
    const ns: Record<IncrementKind, number[]> = {
      local: [],
      shared: [],
      'shared, js engine': [],
      'atomic floor': [],
    };
    for (let round = 0; round < runs; round++) {
      const parts: string[] = [];
      for (let i = 0; i < kinds.length; i++) {
        const result = await runners[i].run(events);
        consume(result.checksum);
        ns[kinds[i]].push(result.ns / events);
        parts.push(`${kinds[i]} ${formatNs(result.ns / events)}`);
      }
      log(`    round ${round + 1}/${runs}: ${parts.join(', ')}`);
    }
    await Promise.all(runners.map((runner) => runner.close()));
    const ratio = medianRatio(ns.shared, ns.local);
    const before = medianRatio(ns['shared, js engine'], ns.shared);
    const headline = size.width === 16384;
    rows.push({
      case: `shared increment, one thread, vs local increment (${size.label}, integer keys, each in a worker of its own)`,
      measured:
        `${formatRatio(ratio)} the local cost (runs ${formatRange(ratiosOf(ns.shared, ns.local), formatRatio)}; ` +
        `shared ${formatNs(median(ns.shared))}/event, local ${formatNs(median(ns.local))}/event)`,
      target: headline ? 'at most 2x' : 'report only',
      met: headline ? ratio <= 2 : null,
    });
    rows.push({
      case: `shared increment, ${size.label}: the engine against the shared path before it (the JS engine, same run)`,
      measured:
        `${formatRatio(before)} faster (runs ${formatRange(ratiosOf(ns['shared, js engine'], ns.shared), formatRatio)}; ` +
        `JS engine ${formatNs(median(ns['shared, js engine']))}/event)`,
      target: headline ? 'at least 3x faster' : 'report only',
      met: headline ? before >= 3 : null,
    });
    rows.push({
      case: `what the CAS costs, ${size.label}: shared increment vs the atomic floor (JS, same hash, blind Atomics.add per row, which can wrap)`,
      measured:
        `${formatRatio(medianRatio(ns.shared, ns['atomic floor']))} the floor's time ` +
        `(floor ${formatNs(median(ns['atomic floor']))}/event)`,
      target: 'report only',
      met: null,
    });
  }
  return rows;
}

// ---- 2. and 3. Two threads on one sketch; a Map fed by postMessage. ----

/** Events per second of `count` events per feeder, all started at once, and each one's time. */
export async function feed(feeders: Runner[], start: Int32Array, line: number, count: number) {
  const pending = feeders.map((feeder) => feeder.run(count, line));
  release(start, line);
  const results = await Promise.all(pending);
  for (const result of results) consume(result.checksum);
  const began = Math.min(...results.map((r) => r.startMs));
  const ended = Math.max(...results.map((r) => r.endMs));
  return {
    rate: (count * feeders.length) / ((ended - began) / 1000),
    // Each feeder's time per event, and when it started after the first: for the log.
    detail: results
      .map((r) => `${formatNs(r.ns / count)} from +${(r.startMs - began).toFixed(0)} ms`)
      .join(' and '),
  };
}

/** Events per second of a Map in this thread, fed by the producers in batches. */
async function feedMap(producers: Runner[], start: Int32Array, line: number, count: number) {
  const map = new Map<number, number>();
  let left = count * producers.length;
  let ended = 0;
  let onBatch: (message: unknown) => void = () => {};
  const done = new Promise<void>((resolve) => {
    onBatch = (message: unknown) => {
      if (!(message instanceof Int32Array)) return;
      for (let i = 0; i < message.length; i++) {
        const key = message[i];
        map.set(key, (map.get(key) ?? 0) + 1);
      }
      left -= message.length;
      if (left === 0) {
        ended = performance.timeOrigin + performance.now();
        resolve();
      }
    };
  });
  for (const producer of producers) producer.worker.on('message', onBatch);
  const pending = producers.map((producer) => producer.run(count, line));
  release(start, line);
  const results = await Promise.all(pending);
  await done;
  for (const producer of producers) producer.worker.off('message', onBatch);
  consume(map.size);
  const began = Math.min(...results.map((r) => r.startMs));
  return (count * producers.length) / ((ended - began) / 1000);
}

function formatRate(perSecond: number): string {
  return `${(perSecond / 1e6).toFixed(2)}M events/s`;
}

async function threadsCase(options: BenchOptions): Promise<Row[]> {
  const { events, runs, log } = options;
  const rows: Row[] = [];
  for (const size of [
    { label: '65536x4', width: 65536, depth: 4, withMap: true },
    { label: '2048x4', width: 2048, depth: 4, withMap: false },
  ]) {
    log(`  threads on one shared sketch ${size.label}, ${formatCount(events)} events per thread`);
    const sketch = new CountMinSketch({ width: size.width, depth: size.depth, shared: true });
    const start = new Int32Array(new SharedArrayBuffer(4));
    const feeders = [
      await spawn({ role: 'feeder', handle: sketch.handle, start, events, seed: SEED + 10 }),
      await spawn({ role: 'feeder', handle: sketch.handle, start, events, seed: SEED + 11 }),
    ];
    // The control: the second thread on a sketch of its own, so nothing is shared; what the
    // sketch's code does on two cores when no cache line moves between them.
    const own = new CountMinSketch({ width: size.width, depth: size.depth, shared: true });
    const loner = await spawn({
      role: 'feeder',
      handle: own.handle,
      start,
      events,
      seed: SEED + 11,
    });
    // Issue 22, item 5: the same two threads, each counting into a delta of its own that it
    // folds into the shared cells every `foldEvery` (see CountMinSketch's foldEvery); at two
    // sizes of delta, since what a fold saves grows with it, and so does the bound it adds.
    const cells = size.width * size.depth;
    const folds = [cells, 4 * cells].map((foldEvery) => ({
      foldEvery,
      feeders: [SEED + 10, SEED + 11].map((seed) =>
        spawn({ role: 'feeder', handle: sketch.handle, start, events, seed, foldEvery }),
      ),
      one: [] as number[],
      two: [] as number[],
    }));
    const folders = await Promise.all(folds.map((fold) => Promise.all(fold.feeders)));
    const producers = size.withMap
      ? [
          await spawn({ role: 'producer', start, batch: BATCH, events, seed: SEED + 10 }),
          await spawn({ role: 'producer', start, batch: BATCH, events, seed: SEED + 11 }),
        ]
      : [];
    const one: number[] = [];
    const two: number[] = [];
    const apart: number[] = [];
    const maps: number[] = [];
    let line = 0;
    for (let round = 0; round < runs; round++) {
      sketch.clear();
      one.push((await feed(feeders.slice(0, 1), start, ++line, events)).rate);
      sketch.clear();
      const both = await feed(feeders, start, ++line, events);
      two.push(both.rate);
      let text = `1 thread ${formatRate(one[round])}, 2 threads ${formatRate(both.rate)} (${both.detail})`;
      sketch.clear();
      own.clear();
      apart.push((await feed([feeders[0], loner], start, ++line, events)).rate);
      text += `, 2 threads on 2 sketches ${formatRate(apart[round])}`;
      for (let f = 0; f < folds.length; f++) {
        const fold = folds[f];
        sketch.clear();
        fold.one.push((await feed(folders[f].slice(0, 1), start, ++line, events)).rate);
        sketch.clear();
        fold.two.push((await feed(folders[f], start, ++line, events)).rate);
        text +=
          `, folding every ${formatCount(fold.foldEvery)}: 1 thread ${formatRate(fold.one[round])}, ` +
          `2 threads ${formatRate(fold.two[round])}`;
      }
      if (producers.length > 0) {
        maps.push(await feedMap(producers, start, ++line, events / 2));
        text += `, Map via postMessage ${formatRate(maps[round])}`;
      }
      log(`    round ${round + 1}/${runs}: ${text}`);
    }
    await Promise.all(
      [...feeders, loner, ...producers, ...folders.flat()].map((runner) => runner.close()),
    );
    const ratio = medianRatio(two, one);
    rows.push({
      case: `2 worker threads on one shared sketch ${size.label}, uniform keys: aggregate throughput vs 1 thread`,
      measured:
        `${formatRatio(ratio)} (runs ${formatRange(ratiosOf(two, one), formatRatio)}; ` +
        `2 threads ${formatRate(median(two))}, 1 thread ${formatRate(median(one))})`,
      target: size.width === 65536 ? 'at least 1.4x' : 'report only',
      met: size.width === 65536 ? ratio >= 1.4 : null,
    });
    for (const fold of folds) {
      const vsOne = medianRatio(fold.two, one);
      rows.push({
        case:
          `2 worker threads on one shared sketch ${size.label}, each folding a delta of its own ` +
          `every ${formatCount(fold.foldEvery)} events (an estimate may miss up to that many of ` +
          `the other thread's), vs 1 thread updating the cells at once`,
        measured:
          `${formatRatio(vsOne)} (runs ${formatRange(ratiosOf(fold.two, one), formatRatio)}; ` +
          `2 threads ${formatRate(median(fold.two))}; 1 thread folding ` +
          `${formatRate(median(fold.one))})`,
        target: size.width === 65536 ? 'at least 1.4x' : 'report only',
        met: size.width === 65536 ? vsOne >= 1.4 : null,
      });
    }
    rows.push({
      case: `control, ${size.label}: 2 worker threads each on a shared sketch of its own (nothing shared) vs 1 thread`,
      measured:
        `${formatRatio(medianRatio(apart, one))} (runs ${formatRange(ratiosOf(apart, one), formatRatio)}; ` +
        `${formatRate(median(apart))})`,
      target: 'report only',
      met: null,
    });
    if (maps.length > 0) {
      const vsMap = medianRatio(two, maps);
      rows.push({
        case:
          `2 threads on one shared sketch ${size.label} vs one Map<number, number> in the main ` +
          `thread fed by 2 workers' postMessage batches of ${BATCH} keys`,
        measured:
          `${formatRatio(vsMap)} the throughput (runs ${formatRange(ratiosOf(two, maps), formatRatio)}; ` +
          `Map ${formatRate(median(maps))})`,
        target: 'at least 10x',
        met: vsMap >= 10,
      });
    }
  }
  return rows;
}

// ---- What moving a cache line between the two cores costs on this machine. ----

const HANDOFFS = 1_000_000;

export async function handoffCase(options: BenchOptions): Promise<Row[]> {
  const { runs, log } = options;
  const start = new Int32Array(new SharedArrayBuffer(4));
  const ns: number[] = [];
  for (let round = 0; round < runs; round++) {
    const cell = new Int32Array(new SharedArrayBuffer(64));
    const sides = [
      await spawn({ role: 'pingpong', start, cell, side: 0, events: 1, seed: 0 }),
      await spawn({ role: 'pingpong', start, cell, side: 1, events: 1, seed: 0 }),
    ];
    const pending = sides.map((side) => side.run(HANDOFFS, round + 1));
    release(start, round + 1);
    const results = await Promise.all(pending);
    await Promise.all(sides.map((side) => side.close()));
    const ms =
      Math.max(...results.map((r) => r.endMs)) - Math.min(...results.map((r) => r.startMs));
    ns.push((ms * 1e6) / (2 * HANDOFFS));
  }
  log(`  cache-line handoff between two threads: ${ns.map(formatNs).join(', ')}`);
  return [
    {
      case: 'the machine: one written cache line handed from one thread to the other and back (Atomics ping-pong), per handoff',
      measured: `${formatNs(median(ns))} (runs ${formatRange(ns, formatNs)})`,
      target: 'report only',
      met: null,
    },
  ];
}

// ---- 4. Memory by thread count, in child processes. ----

function memoryCase(options: BenchOptions): Row[] {
  const { events, runs, log } = options;
  const threadCounts = [1, 2, 4];
  const modes = ['shared sketch', 'Map per thread'] as const;
  log(`  memory by thread count, ${formatCount(events)} events in all, one child per run`);
  const samples = new Map<string, MemoryReport[]>();
  for (let round = 0; round < runs; round++) {
    const parts: string[] = [];
    for (const mode of modes) {
      for (const threads of threadCounts) {
        const child = spawnSync(
          process.execPath,
          ['--expose-gc', MEMORY_CHILD, mode, String(threads), String(events)],
          { encoding: 'utf8', maxBuffer: 1 << 20 },
        );
        if (child.status !== 0) throw new Error(`memory child failed: ${child.stderr}`);
        const report = JSON.parse(child.stdout.trim().split('\n').pop() as string) as MemoryReport;
        const key = `${mode}/${threads}`;
        samples.set(key, [...(samples.get(key) ?? []), report]);
        parts.push(`${key} RSS +${formatBytes(report.rssGrowthBytes)}`);
      }
    }
    log(`    round ${round + 1}/${runs}: ${parts.join(', ')}`);
  }
  const of = (mode: string, threads: number) => samples.get(`${mode}/${threads}`) ?? [];
  const rss = (mode: string, threads: number) =>
    median(of(mode, threads).map((r) => r.rssGrowthBytes));
  const heaps = (mode: string, threads: number) =>
    median(of(mode, threads).map((r) => r.structureBytes - r.sketchBytes));
  const sketchBytes = of('shared sketch', 1)[0].sketchBytes;
  // The figure is the whole process's RSS growth while every thread feeds: it counts all of
  // them, and the sketch's pages as they are first touched. The workers' heap growth after a
  // collection is shown beside it; it swings by a few hundred KiB with the collector's timing.
  const describe = (mode: string) =>
    threadCounts
      .map(
        (t) =>
          `${t} thread${t > 1 ? 's' : ''}: RSS +${formatBytes(rss(mode, t))} ` +
          `(workers' heaps ${formatBytes(heaps(mode, t))})`,
      )
      .join('; ');
  const shared = threadCounts.map((t) => rss('shared sketch', t));
  const spread = Math.max(...shared) - Math.min(...shared);
  // Constant: one sketch whatever the thread count, against a copy per thread, which would add
  // a sketch's bytes for every thread past the first. Both instruments swing by 100-200 KiB
  // from run to run (RSS has gone down over a feeding), so the line between the two is one
  // sketch's bytes: a spread below it cannot hold a second copy.
  const allowance = sketchBytes;
  return [
    {
      case: `memory with 1, 2, 4 threads feeding one shared sketch (${formatBytes(sketchBytes)} of shared memory), ${formatCount(events)} uniform events over 1M keys in all`,
      measured: `${describe('shared sketch')}; spread of RSS growth ${formatBytes(spread)}`,
      target: `constant: spread <= ${formatBytes(allowance)}`,
      met: spread <= allowance,
    },
    {
      case: 'memory with 1, 2, 4 threads: a Map<number, number> per thread (the workaround it replaces)',
      measured: describe('Map per thread'),
      target: 'report only',
      met: null,
    },
  ];
}

export async function sharedSuite(options: BenchOptions): Promise<Row[]> {
  const rows = await incrementCase(options);
  rows.push(...(await threadsCase(options)));
  rows.push(...(await handoffCase(options)));
  rows.push(...memoryCase(options));
  return rows;
}
