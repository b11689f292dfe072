/**
 * A rate limiter whose windows live in Redis, for a fleet: the sliding window of
 * limits/rate-limiter.ts over one Redis string per aligned window
 * (`hotcount:{name}:w:<window number>`), each expiring at the end of the window after it, so
 * Redis holds two windows of cells per limiter, whatever the number of clients.
 *
 * The admission and the update run as one script (scripts.ts), atomic, in one round trip; the
 * decision's fields (remaining, resetMs, retryAfterMs) are computed here from what the script
 * found, by the same function as the local limiter's. Windows are aligned to the clock, so
 * processes and hosts that share a clock share windows; `now` is injectable. With the same
 * secret, dimensions and clock, a RedisRateLimiter answers a stream of requests exactly as a
 * local RateLimiter does (a test checks every decision).
 */
import { checkOptionNames, integerIn, typeError } from '../errors.js';
import { type Key, KeyHasher } from '../hash/key-hasher.js';
import { copySecret, hashKeyWords, secretFingerprint } from '../hash/secret.js';
import { checkCount } from '../limits/options.js';
import { checkWindowMs } from '../limits/rate.js';
import { type RateLimitDecision, slidingDecision } from '../limits/rate-limiter.js';
import { checkClock } from '../limits/windows.js';
import { resolveDimensions } from '../sketch/dimensions.js';
import {
  checkName,
  commands,
  type HotcountCommands,
  keyCells,
  type RedisClient,
} from './redis-count-min.js';

export interface RedisRateLimiterOptions {
  redis: RedisClient;
  name: string;
  secret: Uint8Array;
  /** Requests per window per key: an integer >= 1. */
  limit: number;
  /** The window, in milliseconds. */
  windowMs: number;
  width?: number;
  depth?: number;
  epsilon?: number;
  delta?: number;
  /** The clock, in milliseconds. Default Date.now. */
  now?: () => number;
}

const OPTION_NAMES = [
  'redis',
  'name',
  'secret',
  'limit',
  'windowMs',
  'width',
  'depth',
  'epsilon',
  'delta',
  'now',
];

export class RedisRateLimiter {
  readonly name: string;
  readonly limit: number;
  readonly windowMs: number;
  readonly width: number;
  readonly depth: number;
  private readonly redis: RedisClient & HotcountCommands;
  private readonly hasher: KeyHasher;
  private readonly shape: string;
  private readonly now: () => number;
  private readonly header: string;
  /** Whether the shape was checked: true, a check under way, or false (not yet). */
  private ready: boolean | Promise<void> = false;

  constructor(options: RedisRateLimiterOptions) {
    if (options === null || typeof options !== 'object') {
      throw typeError('options', 'an object with redis, name, secret, limit and windowMs', options);
    }
    checkOptionNames('options', options, OPTION_NAMES);
    const { redis, name, secret, limit, windowMs, now, ...sizing } = options;
    if (redis === null || typeof redis !== 'object' || typeof redis.defineCommand !== 'function') {
      throw typeError('redis', 'an ioredis Redis or Cluster', redis);
    }
    if (secret === undefined) {
      throw new TypeError('secret is required: the fleet shares one (at least 16 bytes)');
    }
    this.name = checkName(name);
    this.limit = integerIn('limit', limit, 1, 0x7fffffff);
    this.windowMs = checkWindowMs(windowMs);
    const secretBytes = copySecret(secret, 'secret');
    const { width, depth } = resolveDimensions(sizing);
    this.width = width;
    this.depth = depth;
    const fingerprint = Buffer.from(secretFingerprint(secretBytes)).toString('hex');
    this.shape = `${width}:${depth}:sliding_${this.limit}_${this.windowMs}:${fingerprint}`;
    const [k0, k1] = hashKeyWords(secretBytes);
    this.hasher = new KeyHasher(k0, k1);
    this.now = checkClock(now);
    this.header = `hotcount:{${name}}:header`;
    this.redis = commands(redis);
  }

  /**
   * Checks (or sets) the limiter's shape in Redis, once per instance: a limiter of this name
   * with another limit, window, shape or secret is refused before its first write.
   */
  private checkShape(): Promise<void> {
    if (this.ready === false) {
      const header = this.header;
      const checking = this.redis.hotcountShape(`${header}:none`, header, this.shape, 0).then(
        () => {
          this.ready = true;
        },
        (error) => {
          this.ready = false; // ask again next time (Redis may have been away)
          throw this.refusal(error);
        },
      );
      this.ready = checking;
    }
    return this.ready as Promise<void>;
  }

  private refusal(error: unknown): unknown {
    if (/HOTCOUNT_SHAPE/.test((error as Error)?.message ?? '')) {
      return new RangeError(
        `the Redis limiter "${this.name}" holds another limit, window, shape or secret: refused, nothing written`,
      );
    }
    return error;
  }

  /** The Redis key of window number `window`. */
  windowKey(window: number): string {
    return `hotcount:{${this.name}}:w:${window}`;
  }

  /**
   * Decides a request of `cost` (default 1) for `key` and counts it if it passes: the decision
   * object of RateLimiter.check. A cost of 0 counts nothing.
   */
  async check(key: Key, cost = 1): Promise<RateLimitDecision> {
    checkCount('cost', cost, 0);
    const cells = keyCells(this.hasher, this.width, this.depth, key);
    const time = this.now();
    if (typeof time !== 'number' || time - time !== 0) {
      throw typeError('now()', 'a finite number of milliseconds', time);
    }
    const { windowMs, limit } = this;
    const window = Math.floor(time / windowMs);
    const elapsed = time - window * windowMs;
    if (this.ready !== true) await this.checkShape();
    let reply: [number, number, number];
    try {
      reply = await this.redis.hotcountSliding(
        this.windowKey(window),
        this.header,
        this.windowKey(window - 1),
        limit,
        elapsed / windowMs,
        cost,
        (window + 2) * windowMs - time,
        ...cells,
      );
    } catch (error) {
      throw this.refusal(error);
    }
    const [found, previous, ceiling] = reply;
    let count = found;
    let allowed: boolean;
    if (cost === 0) allowed = found <= ceiling;
    else {
      allowed = found <= ceiling;
      count = allowed ? found : found - cost;
    }
    return slidingDecision(limit, windowMs, previous, count, cost, allowed, ceiling, elapsed);
  }
}
