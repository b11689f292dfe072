/**
 * Issue 37: hotcount/flexible's RateLimiterSketch against rate-limiter-flexible's
 * RateLimiterMemory, which it stands in for.
 *
 * Speed: each run makes a fresh limiter of each kind and consumes 1M distinct client addresses
 * once each, awaited, so that every key is one neither has seen before (the peer's cost of a new
 * key: a Map entry, a record and a timer). Rounds alternate the competitors in one process; an
 * awaited no-op that answers a new RateLimiterRes, the floor under any limiter with this API,
 * runs in the same rounds. The peer's records and timers are cleared after each of its runs,
 * outside the timing, so that the heaps of earlier runs do not weigh on later ones.
 *
 * Memory: heap and external growth over 1M distinct clients in isolated children
 * (limits-memory-child.ts), for the limiter alone and as the insuranceLimiter of a
 * RateLimiterRedis whose Redis is away.
 */
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { RateLimiterSketch } from '../src/flexible/index.js';
import { EVENTS, flatHeapRow, memoryRounds, ratioRow } from './limits.js';
import type { LimiterMemoryCase } from './limits-memory-child.js';
import {
  type AsyncCompetitor,
  type BenchOptions,
  consume,
  formatBytes,
  median,
  nowNs,
  type Row,
  rotateAsync,
} from './measure.js';
import { Prng } from './prng.js';
import { ipKeys, KEY_COUNT, SEED } from './workload.js';

const POINTS = 1_000_000;
const DURATION_S = 60;

/** A competitor that makes a fresh limiter per run and consumes the first `count` keys once. */
function freshRuns(
  name: string,
  keys: readonly string[],
  make: () => { consume(key: string): Promise<{ remainingPoints: number }> },
  clear: (limiter: ReturnType<typeof make>) => void = () => {},
): AsyncCompetitor {
  return {
    name,
    run: async (count) => {
      const limiter = make();
      const t = nowNs();
      let sum = 0;
      for (let i = 0; i < count; i++) {
        sum = (sum + (await limiter.consume(keys[i])).remainingPoints) | 0;
      }
      const ns = nowNs() - t;
      consume(sum);
      clear(limiter);
      return ns;
    },
  };
}

/** The peer's records and their timers, dropped after a run (its internals, for the bench). */
function clearMemory(limiter: unknown): void {
  const storage = (limiter as { _memoryStorage: { _storage: Map<string, { timeoutId: unknown }> } })
    ._memoryStorage._storage;
  for (const record of storage.values()) clearTimeout(record.timeoutId as NodeJS.Timeout);
  storage.clear();
}

async function speedCase(options: BenchOptions): Promise<Row[]> {
  const { runs, log } = options;
  const keys = ipKeys(KEY_COUNT, new Prng(SEED));
  log(
    `  flexible: a fresh limiter per run, ${EVENTS} distinct client addresses consumed once each`,
  );
  const competitors = [
    freshRuns(
      'RateLimiterMemory.consume',
      keys,
      () => new RateLimiterMemory({ points: POINTS, duration: DURATION_S }),
      clearMemory,
    ),
    freshRuns(
      'RateLimiterSketch.consume',
      keys,
      () => new RateLimiterSketch({ points: POINTS, duration: DURATION_S }),
    ),
    freshRuns('awaited no-op answering a RateLimiterRes', keys, () => ({
      consume: async (key: string) => new RateLimiterRes(POINTS - key.length, 60_000, 1, true),
    })),
  ];
  const rounds = await rotateAsync(competitors, {
    operations: EVENTS,
    warmupOperations: 200_000,
    runs,
    log,
  });
  return [
    ratioRow(
      rounds,
      "37.1 RateLimiterSketch.consume vs rate-limiter-flexible's RateLimiterMemory.consume (awaited), 1M distinct client addresses neither has seen",
      'RateLimiterSketch.consume',
      'RateLimiterMemory.consume',
      { factor: 5, faster: true },
    ),
    ratioRow(
      rounds,
      '37.1 where it goes: RateLimiterSketch.consume vs an awaited no-op answering a new RateLimiterRes',
      'RateLimiterSketch.consume',
      'awaited no-op answering a RateLimiterRes',
      null,
    ),
  ];
}

const MEMORY_CASES: readonly LimiterMemoryCase[] = [
  'baseline',
  'hotcount RateLimiterSketch',
  'rate-limiter-flexible RateLimiterMemory',
  'RateLimiterRedis, Redis away, insurance RateLimiterSketch',
  'RateLimiterRedis, Redis away, insurance RateLimiterMemory',
];

function memoryCase(options: BenchOptions): Row[] {
  options.log('  flexible memory: 1M distinct clients, one consume each, one child per run');
  const { samples, growth, describe } = memoryRounds(MEMORY_CASES, options);
  /** Growth beyond what the limiter holds by design (its table and sketches). */
  const beyondRow = (which: LimiterMemoryCase, row: string): Row => {
    const held = samples.get(which)?.[0]?.memoryBytes ?? 0;
    const beyond = median(growth(which)) - held;
    return {
      case: `${row} memory: ${which} over 1M distinct clients, beyond its table and sketches (memoryBytes ${formatBytes(held)})`,
      measured: `${formatBytes(beyond)} beyond; growth ${describe(which)}`,
      target: '< 1 MiB beyond',
      met: beyond < 1024 * 1024,
    };
  };
  const report = (which: LimiterMemoryCase, row: string): Row => ({
    case: `${row} memory: ${which} over 1M distinct clients`,
    measured: describe(which),
    target: 'report only',
    met: null,
  });
  return [
    beyondRow('hotcount RateLimiterSketch', '37.1'),
    flatHeapRow(samples, describe, 'hotcount RateLimiterSketch', '37.1'),
    report('rate-limiter-flexible RateLimiterMemory', '37.1'),
    beyondRow('RateLimiterRedis, Redis away, insurance RateLimiterSketch', '37.2'),
    report('RateLimiterRedis, Redis away, insurance RateLimiterMemory', '37.2'),
    report('baseline', '37.1'),
  ];
}

export async function flexibleSuite(options: BenchOptions): Promise<Row[]> {
  const rows = await speedCase(options);
  rows.push(...memoryCase(options));
  return rows;
}
