/**
 * One memory measurement of a rate limiter, in a process of its own:
 * `node --expose-gc limits-memory-child.js <case>`. Prints one JSON line (a
 * `LimiterMemorySample`) on stdout.
 *
 * The process builds the seed workload's 1M client addresses, warms the case's loop up on a
 * throwaway limiter (other keys), collects garbage, takes a baseline, builds the limiter, makes
 * one request for every address (awaited, for the peers whose calls return promises), collects
 * garbage again and reports the growth, as memory-child.ts does for the sketch.
 *
 * limits.ts imports only this file's types (erased), never the file itself.
 */

import { ThrottlerStorageService } from '@nestjs/throttler';
import { MemoryStore } from 'express-rate-limit';
import { MemoryStore as HonoMemoryStore } from 'hono-rate-limiter';
import { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis } from 'rate-limiter-flexible';
import { RateLimiterSketch } from '../src/flexible/index.js';
import { HonoRateLimiterStore } from '../src/hono/index.js';
import { ExpressRateLimitStore } from '../src/http/index.js';
import { RateLimiter } from '../src/index.js';
import { SketchThrottlerStorage } from '../src/nest/index.js';
import { Prng } from './prng.js';
import { ipKeys, KEY_COUNT, SEED } from './workload.js';

const LIMITER_MEMORY_CASES = [
  'baseline',
  'hotcount RateLimiter',
  'rate-limiter-flexible RateLimiterMemory',
  'express-rate-limit MemoryStore',
  'hotcount ExpressRateLimitStore',
  'hono-rate-limiter MemoryStore',
  'hotcount HonoRateLimiterStore',
  'nest ThrottlerStorageService',
  'hotcount SketchThrottlerStorage',
  'hotcount RateLimiterSketch',
  'RateLimiterRedis, Redis away, insurance RateLimiterMemory',
  'RateLimiterRedis, Redis away, insurance RateLimiterSketch',
] as const;
export type LimiterMemoryCase = (typeof LIMITER_MEMORY_CASES)[number];

export interface LimiterMemorySample {
  case: LimiterMemoryCase;
  /** Growth of heapUsed, after a full collection, from baseline to the fed limiter. */
  heapUsedBytes: number;
  /** Growth of `external` (which includes typed arrays' and WebAssembly memories' bytes). */
  externalBytes: number;
  /** What the limiter says it holds (hotcount's memoryBytes), or 0. */
  memoryBytes: number;
  maxRssBytes: number;
  checksum: number;
}

/** The same limit and window for every limiter: generous, so every request is allowed. */
export const LIMIT = 1_000_000;
export const WINDOW_MS = 60_000;

type Limiter = { check(key: string): Promise<number> | number; memoryBytes: number };

function create(which: LimiterMemoryCase): Limiter | null {
  switch (which) {
    case 'baseline':
      return null;
    case 'hotcount RateLimiter': {
      const limiter = new RateLimiter({ limit: LIMIT, windowMs: WINDOW_MS });
      return { check: (key) => limiter.check(key).remaining, memoryBytes: limiter.memoryBytes };
    }
    case 'rate-limiter-flexible RateLimiterMemory': {
      const limiter = new RateLimiterMemory({ points: LIMIT, duration: WINDOW_MS / 1000 });
      return {
        check: async (key) => (await limiter.consume(key)).remainingPoints,
        memoryBytes: 0,
      };
    }
    case 'express-rate-limit MemoryStore': {
      const store = new MemoryStore();
      store.init({ windowMs: WINDOW_MS } as Parameters<MemoryStore['init']>[0]);
      return { check: async (key) => (await store.increment(key)).totalHits, memoryBytes: 0 };
    }
    case 'hotcount ExpressRateLimitStore':
    case 'hotcount HonoRateLimiterStore': {
      const store =
        which === 'hotcount ExpressRateLimitStore'
          ? new ExpressRateLimitStore()
          : new HonoRateLimiterStore();
      store.init({ windowMs: WINDOW_MS });
      return {
        check: async (key) => (await store.increment(key)).totalHits,
        memoryBytes: store.memoryBytes,
      };
    }
    case 'hono-rate-limiter MemoryStore': {
      const store = new HonoMemoryStore();
      store.init({ windowMs: WINDOW_MS } as Parameters<HonoMemoryStore['init']>[0]);
      return { check: async (key) => (await store.increment(key)).totalHits, memoryBytes: 0 };
    }
    case 'nest ThrottlerStorageService': {
      // Its sweep (an unref'd interval) stays: the process ends by itself after the sample.
      const storage = new ThrottlerStorageService();
      return {
        check: async (key) =>
          (await storage.increment(key, WINDOW_MS, LIMIT, WINDOW_MS, 'default')).totalHits,
        memoryBytes: 0,
      };
    }
    case 'hotcount RateLimiterSketch': {
      const limiter = new RateLimiterSketch({ points: LIMIT, duration: WINDOW_MS / 1000 });
      return {
        check: async (key) => (await limiter.consume(key)).remainingPoints,
        memoryBytes: limiter.memoryBytes,
      };
    }
    case 'RateLimiterRedis, Redis away, insurance RateLimiterMemory':
      return insured(new RateLimiterMemory({ points: LIMIT, duration: WINDOW_MS / 1000 }));
    case 'RateLimiterRedis, Redis away, insurance RateLimiterSketch':
      return insured(new RateLimiterSketch({ points: LIMIT, duration: WINDOW_MS / 1000 }));
    case 'hotcount SketchThrottlerStorage': {
      const storage = new SketchThrottlerStorage();
      return {
        check: async (key) =>
          (await storage.increment(key, WINDOW_MS, LIMIT, WINDOW_MS, 'default')).totalHits,
        // Read after the requests: its window's sketches are made at the first one.
        get memoryBytes() {
          return storage.memoryBytes;
        },
      };
    }
  }
}

/**
 * A client of a Redis that is away: nothing listens on loopback port 1, so every connection is
 * refused, and without the offline queue every command fails at once, as the peer's guide sets
 * up a client whose limiter has an insurance. One for the process (the warm-up's limiters too).
 */
let awayClient: Redis | null = null;

function insured(insurance: RateLimiterMemory | RateLimiterSketch): Limiter {
  awayClient ??= new Redis(1, '127.0.0.1', {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    retryStrategy: () => 1000,
  });
  awayClient.on('error', () => {});
  const limiter = new RateLimiterRedis({
    storeClient: awayClient,
    points: LIMIT,
    duration: WINDOW_MS / 1000,
    insuranceLimiter: insurance,
  });
  return {
    check: async (key) => (await limiter.consume(key)).remainingPoints,
    memoryBytes: insurance instanceof RateLimiterSketch ? insurance.memoryBytes : 0,
  };
}

/** One request per key; in a function of its own, so nothing of it stays in the caller. */
async function feed(
  which: LimiterMemoryCase,
  keys: readonly string[],
): Promise<{ limiter: Limiter | null; checksum: number }> {
  const limiter = create(which);
  let checksum = 0;
  if (limiter !== null) {
    for (const key of keys) checksum = (checksum + (await limiter.check(key))) | 0;
  }
  return { limiter, checksum };
}

/**
 * Memory after full collections. A collected WebAssembly memory (a throwaway limiter's) is
 * given back by a task after the collection, so the snapshot waits for it before reading.
 */
async function snapshot(gc: () => void) {
  for (let i = 0; i < 3; i++) {
    gc();
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const { heapUsed, external } = process.memoryUsage();
  return { heapUsed, external };
}

async function main(): Promise<void> {
  const which = process.argv[2] as LimiterMemoryCase;
  if (!LIMITER_MEMORY_CASES.includes(which)) {
    throw new RangeError(`case must be one of ${LIMITER_MEMORY_CASES.join(', ')}; got ${which}`);
  }
  const gc = globalThis.gc;
  if (typeof gc !== 'function') throw new TypeError('run with node --expose-gc');
  const keys = ipKeys(KEY_COUNT, new Prng(SEED));
  // Warm up on keys of another network, so compiled code is in place before the baseline.
  const warmKeys = keys.slice(0, 100_000).map((key) => `11${key.slice(2)}`);
  let checksum = 0;
  for (let i = 0; i < 3; i++) checksum += (await feed(which, warmKeys)).checksum;

  const before = await snapshot(gc);
  const fed = await feed(which, keys);
  const after = await snapshot(gc);
  checksum += fed.checksum;
  if (fed.limiter !== null) checksum += Number(await fed.limiter.check(keys[0]));
  const sample: LimiterMemorySample = {
    case: which,
    heapUsedBytes: after.heapUsed - before.heapUsed,
    externalBytes: after.external - before.external,
    memoryBytes: fed.limiter?.memoryBytes ?? 0,
    maxRssBytes: process.resourceUsage().maxRSS * 1024,
    checksum: checksum | 0,
  };
  process.stdout.write(`${JSON.stringify(sample)}\n`);
  process.exit(0); // the peers' expiry timers are unref'd, but their stores need not wait
}

await main();
