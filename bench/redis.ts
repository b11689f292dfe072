/**
 * Limits in Redis (issues 13 and 38), against a redis-server this suite starts on a free loopback
 * port (Debian's, as the tests do), both limiters on the same server through clients of their own:
 *
 * - calls per second, with each client library (ioredis 5 and 6, node-redis, iovalkey; both
 *   limiters on the same library): `RedisRateLimiter.check` against rate-limiter-flexible's
 *   `RateLimiterRedis.consume`, 64 calls in flight (a server's concurrent requests), over the
 *   seed workload's 1M client addresses drawn uniformly; runs alternate, 5 rounds.
 * - Redis memory: `used_memory` on a flushed server, after 100k and after 1M distinct clients,
 *   one call each, once for each limiter.
 * - local-first: `check` (awaited, 64 in flight) against the peer in a rotation of their own,
 *   after the one above (its syncs would load Redis during the direct limiter's runs), and
 *   `checkLocal` against a local-only RateLimiter.check in a loop of its own (redis-fleet.ts has
 *   the fleet's rows: Redis commands per second, two proxies).
 */
import type { Redis } from 'ioredis';
import { RateLimiterRedis } from 'rate-limiter-flexible';
import { RateLimiter } from '../src/index.js';
import { RedisRateLimiter } from '../src/redis/index.js';
import { RedisServer } from '../test/helpers/redis.js';
import {
  type ClientKind,
  closeClient,
  connectClient,
  type TestClient,
} from '../test/helpers/redis-clients.js';
import {
  type BenchOptions,
  formatBytes,
  formatRange,
  formatRatio,
  median,
  type Row,
  ratiosOf,
  rotate,
  rotateAsync,
  timedCalls,
} from './measure.js';
import { Prng } from './prng.js';
import { fleetRows } from './redis-fleet.js';
import { ipKeys, KEY_COUNT, SEED, uniformEvents } from './workload.js';

const IN_FLIGHT = 64;
const CALLS = 100_000;
const LIMIT = 1_000_000_000;
const WINDOW_MS = 60_000;

type Call = (key: string) => Promise<unknown>;

/** `count` calls of `call` over `keys[events[...]]`, IN_FLIGHT at a time; ns taken. */
async function drive(call: Call, keys: string[], events: Int32Array, from: number, count: number) {
  let next = 0;
  const start = process.hrtime.bigint();
  const worker = async () => {
    while (next < count) {
      const i = next++;
      await call(keys[events[(from + i) % events.length]]);
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  return Number(process.hrtime.bigint() - start);
}

/**
 * 13.3: the local-first hot path against the local-only limiter, both synchronous, over the
 * same events (1M client addresses), in rotation. The loops hold the thread, so the local-first
 * limiter syncs between runs, not during them (its sync is a timer's work, off the hot path).
 */
function localFirstRow(
  options: BenchOptions,
  keys: string[],
  events: Int32Array,
  secret: Uint8Array,
  redis: Redis,
): { row: Row; checkLocalNs: number } {
  const localOnly = new RateLimiter({ limit: LIMIT, windowMs: WINDOW_MS, secret });
  const localFirst = new RedisRateLimiter({
    redis,
    name: 'bench-local-first-sync',
    secret,
    limit: LIMIT,
    windowMs: WINDOW_MS,
    localFirst: { syncMs: 50 },
  });
  const rounds = rotate(
    [
      {
        name: 'RateLimiter.check',
        run: timedCalls(keys, events, (k) => localOnly.check(k).remaining),
      },
      {
        name: 'checkLocal',
        run: timedCalls(keys, events, (k) => localFirst.checkLocal(k).remaining),
      },
    ],
    { operations: 1_000_000, warmupOperations: 200_000, runs: options.runs, log: options.log },
  );
  localFirst.close().catch(() => {}); // its last push, while the suite goes on
  const local = rounds.get('RateLimiter.check') ?? [];
  const first = rounds.get('checkLocal') ?? [];
  const ratios = ratiosOf(local, first);
  const ratio = median(ratios);
  const ns = (values: number[]) => median(values).toFixed(0);
  const row = {
    case: '13.3 local-first RedisRateLimiter.checkLocal vs local-only RateLimiter.check (sliding window), 1M distinct client addresses',
    measured: `${(ratio * 100).toFixed(0)}% of its throughput (runs ${formatRange(ratios, (r) => `${(r * 100).toFixed(0)}%`)}; ${ns(first)} against ${ns(local)} ns per check)`,
    target: '>= 50%',
    met: ratio >= 0.5,
  };
  return { row, checkLocalNs: median(first) };
}

/** The clients the speed rows run with (test/helpers/redis-clients.ts's kinds). */
const BENCH_CLIENTS: readonly ClientKind[] = ['ioredis', 'ioredis6', 'node-redis', 'iovalkey'];

/** What each client's rows drive: the keys, the events, the secret, where to start in them. */
interface Workload {
  keys: string[];
  events: Int32Array;
  secret: Uint8Array;
  offset: number;
  options: BenchOptions;
}

/**
 * 13.1 and 13.4 with one client library: RedisRateLimiter.check, then the local-first check,
 * each against RateLimiterRedis.consume on the same library (three clients of it: ours, the
 * peer's, the local-first limiter's syncs), in rotations of their own.
 */
async function clientRows(
  kind: ClientKind,
  [ours, theirs, syncing]: TestClient[],
  { keys, events, secret, offset: from, options }: Workload,
): Promise<{ rows: Row[]; peerNs: number[] }> {
  const { runs, log } = options;
  log(`  redis: with ${kind}`);
  const hotcount = new RedisRateLimiter({
    redis: ours,
    name: `bench-${kind}`,
    secret,
    limit: LIMIT,
    windowMs: WINDOW_MS,
  });
  // rate-limiter-flexible tells ioredis from node-redis by an option, not by shape.
  const nodeRedis = kind.startsWith('node-redis');
  const peer = new RateLimiterRedis({
    storeClient: theirs,
    points: LIMIT,
    duration: WINDOW_MS / 1000,
    keyPrefix: `bench-peer-${kind}`,
    ...(nodeRedis ? { useRedisPackage: true } : {}),
  });
  let offset = from;
  const competitor = (name: string, call: Call, settle?: () => Promise<void>) => ({
    name,
    run: async (count: number) => {
      const ns = await drive(call, keys, events, offset, count);
      offset += count;
      await settle?.();
      return ns;
    },
  });
  const against = competitor('RateLimiterRedis.consume', (key) => peer.consume(key));
  // 13.1 first, with nothing else talking to Redis.
  const results = await rotateAsync(
    [competitor('RedisRateLimiter.check', (key) => hotcount.check(key)), against],
    { operations: CALLS, warmupOperations: 5_000, runs, log },
  );
  // Then 13.4, against the peer again. The local-first limiter syncs on a client of its own
  // (so that its pushes and pulls do not queue on another limiter's connection) every 50 ms;
  // its counts are pushed after each of its runs, untimed: a run's 100k distinct clients make
  // pushes that keep Redis busy for a while, and would slow the peer's run after it.
  const localFirst = new RedisRateLimiter({
    redis: syncing,
    name: `bench-local-first-${kind}`,
    secret,
    limit: LIMIT,
    windowMs: WINDOW_MS,
    localFirst: { syncMs: 50 },
  });
  await localFirst.flush();
  const firstResults = await rotateAsync(
    [
      against,
      competitor(
        'local-first check',
        (key) => localFirst.check(key),
        async () => {
          await localFirst.flush();
          await localFirst.flush();
        },
      ),
    ],
    { operations: CALLS, warmupOperations: 5_000, runs, log },
  );
  await localFirst.close();
  const ourNs = results.get('RedisRateLimiter.check') ?? [];
  const theirNs = results.get('RateLimiterRedis.consume') ?? [];
  const ratios = ratiosOf(theirNs, ourNs);
  const ratio = median(ratios);
  const perSecond = (ns: number[]) => Math.round(1e9 / median(ns));
  const firstNs = firstResults.get('local-first check') ?? [];
  const peerNs = firstResults.get('RateLimiterRedis.consume') ?? [];
  const firstRatios = ratiosOf(peerNs, firstNs);
  const rows: Row[] = [
    {
      case: `13.1 RedisRateLimiter.check vs rate-limiter-flexible RateLimiterRedis.consume, both with ${kind}, same redis-server, ${IN_FLIGHT} in flight`,
      measured: `${formatRatio(ratio)} the calls/s (runs ${formatRange(ratios, formatRatio)}; ${perSecond(ourNs)} against ${perSecond(theirNs)} calls/s)`,
      target: '>= 1x',
      met: ratio >= 1,
    },
    {
      case: `13.4 local-first RedisRateLimiter.check (awaited, syncMs 50) vs RateLimiterRedis.consume, both with ${kind}, same redis-server, ${IN_FLIGHT} in flight`,
      measured: `${formatRatio(median(firstRatios))} the calls/s (runs ${formatRange(firstRatios, formatRatio)}; ${perSecond(firstNs)} against ${perSecond(peerNs)} calls/s)`,
      target: '>= 50x',
      met: median(firstRatios) >= 50,
    },
  ];
  return { rows, peerNs };
}

async function usedMemory(redis: Redis): Promise<number> {
  const info = await redis.info('memory');
  return Number(/used_memory:(\d+)/.exec(info)?.[1]);
}

export async function redisSuite(options: BenchOptions): Promise<Row[]> {
  const { runs, log } = options;
  log(`  redis: a redis-server of its own; ${IN_FLIGHT} calls in flight, ${CALLS} calls per run`);
  const server = await RedisServer.start();
  const ours = server.ioredis();
  const theirs = server.ioredis();
  const syncing = server.ioredis();
  try {
    const keys = ipKeys(KEY_COUNT, new Prng(SEED));
    const events = uniformEvents(2_000_000, KEY_COUNT, new Prng(SEED + 30));
    const secret = new Uint8Array(16).fill(13);
    const rows: Row[] = [];
    let peerNs: number[] = [];
    let offset = 0;
    for (const kind of BENCH_CLIENTS) {
      const made = await Promise.all([0, 1, 2].map(() => connectClient(server.port, {}, kind)));
      try {
        const kindRows = await clientRows(kind, made, { keys, events, secret, offset, options });
        offset += 2 * (runs + 1) * CALLS;
        rows.push(...kindRows.rows);
        if (kind === 'ioredis') peerNs = kindRows.peerNs;
      } finally {
        for (const client of made) closeClient(client);
      }
    }
    const hotPath = localFirstRow(options, keys, events, secret, syncing);
    const syncRatio = median(peerNs) / hotPath.checkLocalNs;
    rows[1].measured += `; checkLocal, synchronous (13.3): ${Math.round(1e9 / hotPath.checkLocalNs)} calls/s, ${formatRatio(syncRatio)}`;
    rows.push(hotPath.row);

    // The local-first client's query buffer, grown by its pushes, is Redis's memory too, and
    // Redis shrinks it in the background: gone before the memory is read.
    syncing.disconnect();
    await new Promise((resolve) => setTimeout(resolve, 200));
    // Memory: each limiter alone on a flushed server (an hour's window, so that no window turns
    // during the measurement), used_memory after 100k and after 1M distinct clients.
    const grown = new Map<string, [number, number]>();
    const hourly = new RedisRateLimiter({
      redis: ours,
      name: 'bench-memory',
      secret,
      limit: LIMIT,
      windowMs: 3_600_000,
    });
    const hourlyPeer = new RateLimiterRedis({
      storeClient: theirs,
      points: LIMIT,
      duration: 3600,
      keyPrefix: 'bench-peer-memory',
    });
    const distinct = Int32Array.from({ length: KEY_COUNT }, (_, i) => i);
    for (const [name, call, client] of [
      ['hotcount RedisRateLimiter', (key: string) => hourly.check(key), ours],
      ['rate-limiter-flexible RateLimiterRedis', (key: string) => hourlyPeer.consume(key), theirs],
    ] as const) {
      // Freed now, not by a background thread while the figures are read.
      await client.flushall('SYNC');
      const before = await usedMemory(client);
      await drive(call, keys, distinct, 0, KEY_COUNT / 10);
      const tenth = (await usedMemory(client)) - before;
      await drive(call, keys, distinct, KEY_COUNT / 10, KEY_COUNT - KEY_COUNT / 10);
      grown.set(name, [tenth, (await usedMemory(client)) - before]);
      log(
        `    memory: ${name} +${formatBytes(tenth)} after 100k clients, +${formatBytes((await usedMemory(client)) - before)} after 1M`,
      );
    }
    const [ourTenth, ourAll] = grown.get('hotcount RedisRateLimiter') ?? [0, 0];
    const [peerTenth, peerAll] = grown.get('rate-limiter-flexible RateLimiterRedis') ?? [0, 0];
    rows.push({
      case: `13.2 Redis memory (used_memory) after 100k and after ${KEY_COUNT / 1e6}M distinct clients, one window (its cells: ${formatBytes(hourly.width * hourly.depth * 4)})`,
      measured: `hotcount RedisRateLimiter +${formatBytes(ourTenth)} and +${formatBytes(ourAll)}; rate-limiter-flexible RateLimiterRedis +${formatBytes(peerTenth)} and +${formatBytes(peerAll)} (one run each)`,
      target: 'hotcount constant (its cells)',
      met: Math.abs(ourAll - ourTenth) <= 64 * 1024,
    });
    rows.push(...(await fleetRows(options, server)));
    return rows;
  } finally {
    ours.disconnect();
    theirs.disconnect();
    syncing.disconnect();
    await server.stop();
  }
}
