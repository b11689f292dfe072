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
import type { Key } from '../hash/key-hasher.js';
import { type GcraGrid, gcraGrid } from '../limits/gcra.js';
import { checkCount } from '../limits/options.js';
import { checkWindowMs } from '../limits/rate.js';
import {
  checkAlgorithm,
  gcraDecision,
  type RateLimitAlgorithm,
  type RateLimitDecision,
  slidingDecision,
} from '../limits/rate-limiter.js';
import { checkClock } from '../limits/windows.js';
import { heldShape, PLACE_OPTION_NAMES, type PlaceOptions, SketchPlace } from './place.js';

export interface RedisRateLimiterOptions extends PlaceOptions {
  /** Requests per window per key: an integer >= 1. */
  limit: number;
  /** The window, in milliseconds. */
  windowMs: number;
  /** Default 'sliding-window'. */
  algorithm?: RateLimitAlgorithm;
  /** gcra only: requests allowed at one instant, an integer >= 1. Default `limit`. */
  burst?: number;
  /** The clock, in milliseconds. Default Date.now. */
  now?: () => number;
}

const OPTION_NAMES = [...PLACE_OPTION_NAMES, 'limit', 'windowMs', 'algorithm', 'burst', 'now'];

export class RedisRateLimiter {
  readonly name: string;
  readonly limit: number;
  readonly windowMs: number;
  readonly algorithm: RateLimitAlgorithm;
  /** Requests allowed at one instant: `burst` for gcra, `limit` for the sliding window. */
  readonly burst: number;
  readonly width: number;
  readonly depth: number;
  private readonly place: SketchPlace;
  private readonly now: () => number;
  /** gcra's time grid, or null for the sliding window. */
  private readonly grid: GcraGrid | null;
  /** A window's (gcra: an era's) length, in ms: Redis holds one string per span. */
  private readonly spanMs: number;

  constructor(options: RedisRateLimiterOptions) {
    if (options === null || typeof options !== 'object') {
      throw typeError('options', 'an object with redis, name, secret, limit and windowMs', options);
    }
    checkOptionNames('options', options, OPTION_NAMES);
    const { limit, windowMs, algorithm, burst, now, ...where } = options;
    this.limit = integerIn('limit', limit, 1, 0x7fffffff);
    this.windowMs = checkWindowMs(windowMs);
    this.algorithm = checkAlgorithm(algorithm);
    if (this.algorithm !== 'gcra' && burst !== undefined) {
      throw new RangeError("burst applies to algorithm 'gcra' only; the sliding window has none");
    }
    this.burst = integerIn('burst', burst ?? this.limit, 1, 0x7fffffff);
    this.grid = this.algorithm === 'gcra' ? gcraGrid(this.limit, this.windowMs, this.burst) : null;
    this.spanMs = this.grid === null ? this.windowMs : this.grid.eraMs;
    const rule =
      this.grid === null
        ? `sliding_${this.limit}_${this.windowMs}`
        : `gcra_${this.limit}_${this.windowMs}_${this.burst}`;
    const place = new SketchPlace(where, rule);
    this.place = place;
    this.name = place.name;
    this.width = place.width;
    this.depth = place.depth;
    this.now = checkClock(now);
  }

  /** A shape refusal in the limiter's words; other errors as they are. */
  private refusal(error: unknown): unknown {
    if (heldShape(error) === null) return error;
    return new RangeError(
      `the Redis limiter "${this.name}" holds another limit, window, shape or secret: refused, nothing written`,
    );
  }

  /** The Redis key of window number `window`. */
  windowKey(window: number): string {
    return this.place.key(`w:${window}`);
  }

  /**
   * Decides a request of `cost` (default 1) for `key` and counts it if it passes: the decision
   * object of RateLimiter.check. A cost of 0 counts nothing.
   */
  async check(key: Key, cost = 1): Promise<RateLimitDecision> {
    checkCount('cost', cost, 0);
    const place = this.place;
    const cells = place.cellsOf(key);
    const time = this.now();
    if (typeof time !== 'number' || time - time !== 0) {
      throw typeError('now()', 'a finite number of milliseconds', time);
    }
    const { spanMs, grid, limit } = this;
    const window = Math.floor(time / spanMs);
    const elapsed = time - window * spanMs;
    // The shape is checked once, before the first check; the script does not check it again.
    await place.checkShape((error) => this.refusal(error));
    const keys = [place.header, this.windowKey(window - 1)] as const;
    const expireMs = (window + 2) * spanMs - time;
    if (grid === null) {
      const [found, previous, ceiling] = await place.redis.hotcountWindow(
        this.windowKey(window),
        ...keys,
        's',
        cost,
        expireMs,
        limit,
        elapsed / spanMs,
        ...cells,
      );
      const allowed = found <= ceiling;
      // A refused request was not counted: its count is what the key had.
      const count = cost === 0 || allowed ? found : found - cost;
      return slidingDecision(limit, spanMs, previous, count, cost, allowed, ceiling, elapsed);
    }
    const { ticksPerMs, intervalTicks, horizonTicks } = grid;
    const nowTicks = Math.floor(elapsed * ticksPerMs);
    // A cost over burst can never pass: peek, as the local limiter does.
    const amount = cost > this.burst ? 0 : cost * intervalTicks;
    const [found, , ceiling, floor] = await place.redis.hotcountWindow(
      this.windowKey(window),
      ...keys,
      'g',
      amount,
      expireMs,
      spanMs * ticksPerMs,
      nowTicks,
      horizonTicks,
      ...cells,
    );
    let tat: number;
    let allowed: boolean;
    if (amount === 0) {
      tat = Math.max(found, floor);
      allowed = cost === 0;
    } else {
      allowed = found <= ceiling;
      tat = allowed ? found : found - amount;
    }
    return gcraDecision(grid, limit, this.burst, tat, nowTicks, cost, allowed);
  }
}
