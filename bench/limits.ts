/**
 * The limits (issue 11): RateLimiter.check against the peers a Node user would reach for
 * (rate-limiter-flexible's RateLimiterMemory, express-rate-limit's MemoryStore), against a bare
 * sketch increment, GCRA against the sliding window, Inflight's acquire + release, memory over
 * 1M clients in fresh child processes, and two threads on one shared RateLimiter.
 *
 * Workload: the seed workload's 1M distinct client addresses (`10.x.y.z`), and 1M events per
 * run drawn uniformly over them, the same events for every competitor. Limits are generous
 * (1M per minute for every limiter), so every request is allowed and every competitor does the
 * same work: count it. The peers' calls return promises: each is awaited before the next, as a
 * request handler awaits its limiter; that is the cost their users pay per request. The same
 * checks again on 1M 36-character keys (issue 22), and beside the checks, each part of one
 * timed alone: the clock it reads, the key's string read cold.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { ThrottlerStorageService } from '@nestjs/throttler';
import { MemoryStore } from 'express-rate-limit';
import { MemoryStore as HonoMemoryStore } from 'hono-rate-limiter';
import { RateLimiterMemory } from 'rate-limiter-flexible';
import { HonoRateLimiterStore } from '../src/hono/index.js';
import { ExpressRateLimitStore } from '../src/http/index.js';
import { CountMinSketch, Inflight, RateLimiter } from '../src/index.js';
import { SketchThrottlerStorage } from '../src/nest/index.js';
import type { LimiterMemoryCase, LimiterMemorySample } from './limits-memory-child.js';
import {
  type AsyncCompetitor,
  type BenchOptions,
  formatBytes,
  formatNs,
  formatRange,
  formatRatio,
  median,
  type Row,
  ratiosOf,
  rotateAsync,
  roundsOf,
  timedAwaited,
  timedCalls,
} from './measure.js';
import { Prng } from './prng.js';
import { feed, handoffCase, spawn } from './shared.js';
import { ipKeys, KEY_COUNT, SEED, stringKeys, uniformEvents } from './workload.js';

const LIMIT = 1_000_000;
const WINDOW_MS = 60_000;
/** Events per run of the limits' speed cases (bench/runtime-child.ts takes the same). */
export const EVENTS = 1_000_000;
const MEMORY_CHILD = fileURLToPath(new URL('./limits-memory-child.js', import.meta.url));

/** "A: x ns, B: y ns" with spreads, for a ratio row. */
function detail(rounds: Map<string, number[]>, names: readonly string[]): string {
  return names
    .map((name) => {
      const values = roundsOf(rounds, name);
      const spread = Math.max(...values) / Math.min(...values);
      return `${name} ${formatNs(median(values))}/call, spread ${formatRatio(spread)}`;
    })
    .join('; ');
}

/** Median ratio a / b within rounds, with its range and both figures. */
export function ratioRow(
  rounds: Map<string, number[]>,
  caseName: string,
  a: string,
  b: string,
  target: { factor: number; faster: boolean } | null,
): Row {
  const ratios = target?.faster
    ? ratiosOf(roundsOf(rounds, b), roundsOf(rounds, a))
    : ratiosOf(roundsOf(rounds, a), roundsOf(rounds, b));
  const ratio = median(ratios);
  const unit = target?.faster ? 'faster' : 'its time';
  const measured = `${formatRatio(ratio)} ${unit} (runs ${formatRange(ratios, formatRatio)}; ${detail(rounds, [a, b])})`;
  if (target === null) return { case: caseName, measured, target: 'report only', met: null };
  return {
    case: caseName,
    measured,
    target: target.faster ? `>= ${target.factor}x faster` : `<= ${target.factor}x its time`,
    met: target.faster ? ratio >= target.factor : ratio <= target.factor,
  };
}

/** RateLimiter.check, sliding window and GCRA, over `keys` as `events` draws them. */
export function checks(keys: string[], events: Int32Array): AsyncCompetitor[] {
  const sliding = new RateLimiter({ limit: LIMIT, windowMs: WINDOW_MS });
  const gcra = new RateLimiter({ limit: LIMIT, windowMs: WINDOW_MS, algorithm: 'gcra' });
  return [
    {
      name: 'check (sliding window)',
      run: timedCalls(keys, events, (k) => sliding.check(k).remaining),
    },
    { name: 'check (gcra)', run: timedCalls(keys, events, (k) => gcra.check(k).remaining) },
  ];
}

/** The peers, each call awaited: their competitors, and what stops them after the rounds. */
export function peers(keys: string[], events: Int32Array) {
  const flexible = new RateLimiterMemory({ points: LIMIT, duration: WINDOW_MS / 1000 });
  const store = new MemoryStore();
  store.init({ windowMs: WINDOW_MS } as Parameters<MemoryStore['init']>[0]);
  // The drop-in store in MemoryStore's place (issue 24: per-client windows), awaited as the
  // middleware awaits a store.
  const dropIn = new ExpressRateLimitStore();
  dropIn.init({ windowMs: WINDOW_MS });
  // hono-rate-limiter's MemoryStore and the drop-in store in its place (issue 36).
  const honoStore = new HonoMemoryStore();
  honoStore.init({ windowMs: WINDOW_MS } as Parameters<HonoMemoryStore['init']>[0]);
  const honoDropIn = new HonoRateLimiterStore();
  honoDropIn.init({ windowMs: WINDOW_MS });
  // @nestjs/throttler's default storage and the storage in its place (issue 36), called as its
  // guard calls them: the window, the limit, a block as long as the window (the guard's default).
  const throttler = new ThrottlerStorageService();
  const sketchThrottler = new SketchThrottlerStorage();
  const competitors: AsyncCompetitor[] = [
    {
      name: 'RateLimiterMemory.consume',
      run: timedAwaited(keys, events, async (k) => (await flexible.consume(k)).remainingPoints),
    },
    {
      name: 'MemoryStore.increment',
      run: timedAwaited(keys, events, async (k) => (await store.increment(k)).totalHits),
    },
    {
      name: 'ExpressRateLimitStore.increment',
      run: timedAwaited(keys, events, async (k) => (await dropIn.increment(k)).totalHits),
    },
    {
      name: 'hono-rate-limiter MemoryStore.increment',
      run: timedAwaited(keys, events, async (k) => (await honoStore.increment(k)).totalHits),
    },
    {
      name: 'HonoRateLimiterStore.increment',
      run: timedAwaited(keys, events, async (k) => (await honoDropIn.increment(k)).totalHits),
    },
    {
      name: 'ThrottlerStorageService.increment',
      run: timedAwaited(
        keys,
        events,
        async (k) =>
          (await throttler.increment(k, WINDOW_MS, LIMIT, WINDOW_MS, 'default')).totalHits,
      ),
    },
    {
      // What an awaited storage call costs before it does anything: the floor under both.
      name: 'awaited no-op storage (reads the key)',
      run: timedAwaited(keys, events, async (k) => k.length),
    },
    {
      name: 'SketchThrottlerStorage.increment',
      run: timedAwaited(
        keys,
        events,
        async (k) =>
          (await sketchThrottler.increment(k, WINDOW_MS, LIMIT, WINDOW_MS, 'default')).totalHits,
      ),
    },
  ];
  const close = () => {
    store.shutdown();
    honoStore.shutdown();
    throttler.onApplicationShutdown();
  };
  return { competitors, close };
}

async function speedCase(options: BenchOptions): Promise<Row[]> {
  const { runs, log } = options;
  const keys = ipKeys(KEY_COUNT, new Prng(SEED));
  const events = uniformEvents(EVENTS, KEY_COUNT, new Prng(SEED + 20));
  log(
    `  limits: 1M client addresses, ${EVENTS} events per run, limit ${LIMIT} per ${WINDOW_MS} ms`,
  );

  const sketch = new CountMinSketch();
  const inflight = new Inflight();
  const others = peers(keys, events);

  const competitors: AsyncCompetitor[] = [
    // Where a check's time goes, beside it (issue 22): the clock every check reads, and the
    // key's string, cold in a 1M-key workload, read at its head or through every character.
    { name: 'the clock (Date.now)', run: timedCalls(keys, events, () => Date.now() & 1) },
    {
      name: 'the string read (length, first character)',
      run: timedCalls(keys, events, (k) => k.length + k.charCodeAt(0)),
    },
    {
      name: 'the string read (every character)',
      run: timedCalls(keys, events, everyCharacter),
    },
    ...checks(keys, events),
    { name: 'sketch.increment', run: timedCalls(keys, events, (k) => sketch.increment(k)) },
    {
      name: 'Inflight acquire + release',
      run: timedCalls(keys, events, (k) => {
        const guard = inflight.acquire(k);
        guard.release();
        return guard.count;
      }),
    },
    ...others.competitors,
  ];
  const rounds = await rotateAsync(competitors, {
    operations: EVENTS,
    warmupOperations: 200_000,
    runs,
    log,
  });
  others.close();
  const check = 'check (sliding window)';
  return [
    ratioRow(
      rounds,
      '11.1 RateLimiter.check (sliding window) vs rate-limiter-flexible RateLimiterMemory.consume (awaited), 1M distinct client addresses',
      check,
      'RateLimiterMemory.consume',
      { factor: 15, faster: true },
    ),
    ratioRow(
      rounds,
      "11.2 RateLimiter.check (sliding window) vs express-rate-limit's MemoryStore.increment (awaited)",
      check,
      'MemoryStore.increment',
      { factor: 10, faster: true },
    ),
    ratioRow(
      rounds,
      '11.4 check vs a bare sketch.increment (default 16384x4) on the same keys',
      check,
      'sketch.increment',
      { factor: 2.5, faster: false },
    ),
    ratioRow(rounds, '11.5 check: gcra vs sliding window', 'check (gcra)', check, null),
    ratioRow(
      rounds,
      '22.1 RateLimiter.check (gcra) vs RateLimiterMemory.consume (awaited), 1M distinct client addresses',
      'check (gcra)',
      'RateLimiterMemory.consume',
      { factor: 15, faster: true },
    ),
    ratioRow(
      rounds,
      '22.2 RateLimiter.check (gcra) vs MemoryStore.increment (awaited)',
      'check (gcra)',
      'MemoryStore.increment',
      { factor: 10, faster: true },
    ),
    floorRow(rounds, check, [
      'the clock (Date.now)',
      'the string read (length, first character)',
      'the string read (every character)',
    ]),
    ratioRow(
      rounds,
      "24.1 ExpressRateLimitStore.increment (per-client windows, awaited) vs express-rate-limit's MemoryStore.increment (awaited), 1M distinct client addresses",
      'ExpressRateLimitStore.increment',
      'MemoryStore.increment',
      null,
    ),
    ratioRow(
      rounds,
      "36.3 HonoRateLimiterStore.increment (per-client windows, awaited) vs hono-rate-limiter's MemoryStore.increment (awaited), 1M distinct client addresses",
      'HonoRateLimiterStore.increment',
      'hono-rate-limiter MemoryStore.increment',
      { factor: 1.5, faster: true },
    ),
    ratioRow(
      rounds,
      "36.4 SketchThrottlerStorage.increment (awaited) vs @nestjs/throttler's ThrottlerStorageService.increment (awaited), 1M distinct client addresses",
      'SketchThrottlerStorage.increment',
      'ThrottlerStorageService.increment',
      { factor: 5, faster: true },
    ),
    ratioRow(
      rounds,
      '36.4 where it goes: SketchThrottlerStorage.increment vs an awaited no-op storage reading the same key',
      'SketchThrottlerStorage.increment',
      'awaited no-op storage (reads the key)',
      null,
    ),
    ratioRow(
      rounds,
      '11.6 Inflight acquire + release vs one sketch.increment',
      'Inflight acquire + release',
      'sketch.increment',
      { factor: 2.5, faster: false },
    ),
  ];
}

/** A checksum of every character of `key`: what reading a cold string through costs. */
function everyCharacter(key: string): number {
  let sum = 0;
  for (let i = 0; i < key.length; i++) sum = (sum * 31 + key.charCodeAt(i)) | 0;
  return sum;
}

/** What a check's time is made of: the parts each measured alone, in the same rounds. */
function floorRow(rounds: Map<string, number[]>, check: string, parts: readonly string[]): Row {
  const of = (name: string) => formatNs(median(roundsOf(rounds, name)));
  return {
    case: '22.0 where a check goes: its parts, each timed alone in the same rounds (1M distinct client addresses)',
    measured: `check ${of(check)}; ${parts.map((part) => `${part} ${of(part)}`).join('; ')}`,
    target: 'report only',
    met: null,
  };
}

/**
 * The same checks on 1M distinct 36-character keys (`customer-000123/api/v1/orders/0042ab`), an
 * API key or a composite key rather than an address, against the same peers.
 */
async function stringKeysCase(options: BenchOptions): Promise<Row[]> {
  const { runs, log } = options;
  const keys = stringKeys(KEY_COUNT, new Prng(SEED));
  const events = uniformEvents(EVENTS, KEY_COUNT, new Prng(SEED + 21));
  log(`  limits: 1M distinct 36-character keys, ${EVENTS} events per run`);
  const others = peers(keys, events);
  const rounds = await rotateAsync([...checks(keys, events), ...others.competitors], {
    operations: EVENTS,
    warmupOperations: 200_000,
    runs,
    log,
  });
  others.close();
  const rows: Row[] = [];
  for (const [algorithm, name] of [
    ['sliding window', 'check (sliding window)'],
    ['gcra', 'check (gcra)'],
  ]) {
    rows.push(
      ratioRow(
        rounds,
        `22.3 RateLimiter.check (${algorithm}) vs RateLimiterMemory.consume (awaited), 1M distinct 36-char keys`,
        name,
        'RateLimiterMemory.consume',
        { factor: 6, faster: true },
      ),
      ratioRow(
        rounds,
        `22.4 RateLimiter.check (${algorithm}) vs MemoryStore.increment (awaited), 1M distinct 36-char keys`,
        name,
        'MemoryStore.increment',
        { factor: 4, faster: true },
      ),
    );
  }
  return rows;
}

function measureInChild(which: LimiterMemoryCase): LimiterMemorySample {
  const child = spawnSync(process.execPath, ['--expose-gc', MEMORY_CHILD, which], {
    encoding: 'utf8',
    maxBuffer: 1024 * 1024,
  });
  if (child.status !== 0) {
    throw new Error(
      `limits memory child "${which}" failed (status ${child.status}): ${child.stderr}`,
    );
  }
  const lines = child.stdout.trim().split('\n');
  return JSON.parse(lines[lines.length - 1]) as LimiterMemorySample;
}

const MEMORY_CASES: readonly LimiterMemoryCase[] = [
  'baseline',
  'hotcount RateLimiter',
  'rate-limiter-flexible RateLimiterMemory',
  'express-rate-limit MemoryStore',
  'hotcount ExpressRateLimitStore',
  'hono-rate-limiter MemoryStore',
  'hotcount HonoRateLimiterStore',
  'nest ThrottlerStorageService',
  'hotcount SketchThrottlerStorage',
];

/**
 * Heap and external growth over 1M clients of each of `cases`, one fresh child per case and
 * round: the samples, and each case's growth and its description for a row.
 */
export function memoryRounds(cases: readonly LimiterMemoryCase[], options: BenchOptions) {
  const { runs, log } = options;
  const samples = new Map<LimiterMemoryCase, LimiterMemorySample[]>(cases.map((c) => [c, []]));
  for (let round = 0; round < runs; round++) {
    const parts: string[] = [];
    for (const which of cases) {
      const sample = measureInChild(which);
      samples.get(which)?.push(sample);
      parts.push(`${which} ${formatBytes(sample.heapUsedBytes + sample.externalBytes)}`);
    }
    log(`    round ${round + 1}/${runs}: ${parts.join(', ')}`);
  }
  const growth = (which: LimiterMemoryCase) =>
    (samples.get(which) ?? []).map((s) => s.heapUsedBytes + s.externalBytes);
  const describe = (which: LimiterMemoryCase) => {
    const list = samples.get(which) ?? [];
    const heap = median(list.map((s) => s.heapUsedBytes));
    const external = median(list.map((s) => s.externalBytes));
    const rss = median(list.map((s) => s.maxRssBytes));
    return `${formatBytes(median(growth(which)))} (heap ${formatBytes(heap)}, external ${formatBytes(external)}; runs ${formatRange(growth(which), formatBytes)}); maxRSS ${formatBytes(rss)}`;
  };
  return { samples, growth, describe };
}

/** Heap and external growth over 1M clients, one fresh child per case and round. */
function memoryCase(options: BenchOptions): Row[] {
  options.log('  limits memory: 1M distinct clients, one request each, one child per run');
  const { samples, growth, describe } = memoryRounds(MEMORY_CASES, options);
  const hotcount = samples.get('hotcount RateLimiter') ?? [];
  const sketches = hotcount[0]?.memoryBytes ?? 0;
  const beyond = median(growth('hotcount RateLimiter')) - sketches;
  return [
    {
      case: `11.3 memory: hotcount RateLimiter over 1M distinct clients, beyond its sketches (memoryBytes ${formatBytes(sketches)})`,
      measured: `${formatBytes(beyond)} beyond; growth ${describe('hotcount RateLimiter')}`,
      target: '< 1 MiB beyond its sketches',
      met: beyond < 1024 * 1024,
    },
    {
      case: '11.3 memory: rate-limiter-flexible RateLimiterMemory over 1M distinct clients',
      measured: describe('rate-limiter-flexible RateLimiterMemory'),
      target: 'report only',
      met: null,
    },
    {
      case: '11.3 memory: express-rate-limit MemoryStore over 1M distinct clients',
      measured: describe('express-rate-limit MemoryStore'),
      target: 'report only',
      met: null,
    },
    {
      case: `24.2 memory: hotcount ExpressRateLimitStore (per-client windows) over 1M distinct clients (memoryBytes ${formatBytes(samples.get('hotcount ExpressRateLimitStore')?.[0]?.memoryBytes ?? 0)})`,
      measured: describe('hotcount ExpressRateLimitStore'),
      target: 'report only',
      met: null,
    },
    flatHeapRow(samples, describe, 'hotcount HonoRateLimiterStore', '36.3'),
    flatHeapRow(samples, describe, 'hotcount SketchThrottlerStorage', '36.4'),
    {
      case: "36.4 memory: @nestjs/throttler's ThrottlerStorageService over 1M distinct clients",
      measured: describe('nest ThrottlerStorageService'),
      target: 'report only',
      met: null,
    },
    {
      case: '36.3 memory: hono-rate-limiter MemoryStore over 1M distinct clients',
      measured: describe('hono-rate-limiter MemoryStore'),
      target: 'report only',
      met: null,
    },
    {
      case: '11.3 memory: baseline child (the 1M addresses, no limiter)',
      measured: describe('baseline'),
      target: 'report only',
      met: null,
    },
  ];
}

/** Issue 36: a drop-in store (hono-rate-limiter's, Nest's) keeps its heap flat over 1M clients. */
export function flatHeapRow(
  samples: Map<LimiterMemoryCase, LimiterMemorySample[]>,
  describe: (which: LimiterMemoryCase) => string,
  which: LimiterMemoryCase,
  row: string,
): Row {
  const list = samples.get(which) ?? [];
  const heap = median(list.map((s) => s.heapUsedBytes));
  return {
    case: `${row} memory: ${which} over 1M distinct clients (memoryBytes ${formatBytes(list[0]?.memoryBytes ?? 0)}): heap growth`,
    measured: `heap ${formatBytes(heap)}; growth ${describe(which)}`,
    target: 'heap growth < 1 MiB (flat)',
    met: heap < 1024 * 1024,
  };
}

/** Two threads checking one shared RateLimiter, against one thread, in the same rounds. */
async function threadsCase(options: BenchOptions): Promise<Row[]> {
  const { runs, log } = options;
  const limiter = new RateLimiter({ limit: LIMIT, windowMs: WINDOW_MS, shared: true });
  const start = new Int32Array(new SharedArrayBuffer(4));
  const events = EVENTS;
  const feeders = [
    await spawn({ role: 'limiter-feeder', handle: limiter.handle, start, events, seed: SEED + 30 }),
    await spawn({ role: 'limiter-feeder', handle: limiter.handle, start, events, seed: SEED + 31 }),
  ];
  const one: number[] = [];
  const two: number[] = [];
  let line = 0;
  for (let round = 0; round < runs; round++) {
    one.push((await feed(feeders.slice(0, 1), start, ++line, events)).rate);
    const both = await feed(feeders, start, ++line, events);
    two.push(both.rate);
    log(
      `    round ${round + 1}/${runs}: 1 thread ${formatNs(1e9 / one[round])}/check, ` +
        `2 threads ${(two[round] / one[round]).toFixed(2)}x its throughput (${both.detail})`,
    );
  }
  await Promise.all(feeders.map((feeder) => feeder.close()));
  const ratios = ratiosOf(two, one);
  return [
    {
      case: '11.7 two threads on one shared RateLimiter (sliding window, default 16384x4) vs one thread, checks per second',
      measured: `${formatRatio(median(ratios))} the throughput (runs ${formatRange(ratios, formatRatio)}; one thread ${formatNs(1e9 / median(one))}/check)`,
      target: '>= 1.5x',
      met: median(ratios) >= 1.5,
    },
  ];
}

export async function limitsSuite(options: BenchOptions): Promise<Row[]> {
  const rows = await speedCase(options);
  rows.push(...(await stringKeysCase(options)));
  rows.push(...memoryCase(options));
  rows.push(...(await threadsCase(options)));
  // The cache-line handoff beside the two-thread figure: what a shared write costs here.
  rows.push(...(await handoffCase(options)));
  return rows;
}
