/**
 * RateLimiter: allow or refuse a key's request, `limit` per `windowMs`, in fixed memory, by
 * one of two rules over the same three sketches in rotation (windows.ts):
 *
 * - 'sliding-window' (the default; Cloudflare's sliding window): the key's count in the
 *   previous window, weighted by the part of the current window still to come, plus its count
 *   in the current one, estimates the requests of the last `windowMs`; a request passes when
 *   that estimate plus its cost stays within `limit`. The weighting assumes the previous
 *   window's requests were spread evenly over it; over any sliding interval of `windowMs` a key
 *   can pass up to twice `limit` (all of one window's at its end, all of the next one's at its
 *   start, when the first followed a quiet window), but in an aligned window it never passes
 *   more than `limit`: the current count alone must stay within it.
 * - 'gcra': the generic cell rate algorithm (see gcra.ts): `burst` requests at one instant
 *   (default `limit`), then one every windowMs / limit; over any interval of length L a key
 *   passes at most burst + L * limit / windowMs.
 *
 * Refused requests are not counted: a client that keeps retrying while refused does not push
 * its own release further away. The test and the update are one atomic step on the sketch
 * (SketchKernel.raiseWithin, the conservative rule with a ceiling), also across threads: two
 * threads cannot both take the last unit of a key's quota. Collisions only make a key's figures
 * higher, so they can refuse a request early, never let one through that its own history
 * would refuse.
 */

import { checkClock } from '../clock.js';
import { checkOptionNames, integerIn, rangeError, typeError } from '../errors.js';
import type { Key } from '../hash/key-hasher.js';
import { SATURATED } from '../sketch/counters.js';
import { type Dimensions, dimensionsOf } from '../sketch/dimensions.js';
import type { EngineName } from '../sketch/sketch-options.js';
import { type GcraGrid, gcraGrid } from './gcra.js';
import {
  checkCount,
  checkOptions,
  LIMIT_SKETCH_OPTION_NAMES,
  type LimitSketchOptions,
  sketchOptions,
} from './options.js';
import { checkWindowMs } from './rate.js';
import { type WindowStep, weightedCeiling } from './window-step.js';
import { Windows, type WindowsHandle } from './windows.js';

/**
 * How a limiter decides: 'sliding-window' (the current window's count plus the previous one's,
 * weighted by the part of it still inside the window) or 'gcra' (the generic cell rate
 * algorithm: one request per windowMs / limit, with a burst).
 */
export type RateLimitAlgorithm = 'sliding-window' | 'gcra';

/**
 * Options of `new RateLimiter`: the limit, the window, the algorithm (and GCRA's burst), the
 * clock and the sketches' options (LimitSketchOptions).
 */
export interface RateLimiterOptions extends LimitSketchOptions {
  /** Requests (in units of cost) allowed per window: an integer >= 1. */
  limit: number;
  /** The window, in milliseconds: an integer >= 1. */
  windowMs: number;
  /** Default 'sliding-window'. */
  algorithm?: RateLimitAlgorithm;
  /** gcra only: requests allowed at one instant, an integer >= 1. Default `limit`. */
  burst?: number;
  /** The clock, in milliseconds. Default Date.now. */
  now?: () => number;
}

/** What `check` decided, and what to tell the client. */
export interface RateLimitDecision {
  /** Whether the request may go ahead (it was counted if so, and only then). */
  allowed: boolean;
  /** The limit per window. */
  limit: number;
  /** Requests of cost 1 that would still pass right now. */
  remaining: number;
  /** Milliseconds until the key has its whole quota back, if it sends nothing more. */
  resetMs: number;
  /**
   * 0 when allowed; else milliseconds (whole, rounded up) until this request would pass, if the
   * key sends nothing more meanwhile; Infinity for a cost that can never pass (over `limit`,
   * over `burst` for gcra).
   */
  retryAfterMs: number;
}

/**
 * What decides a rate limit synchronously: a RateLimiter, or a limiter elsewhere that answers
 * from process memory (a local-first RedisRateLimiter's `local`). The HTTP middleware and the
 * proxy decide with one.
 */
export interface RateDecider {
  /** Requests a key may make per window. */
  readonly limit: number;
  /** The window, in milliseconds. */
  readonly windowMs: number;
  /** How it decides. */
  readonly algorithm: RateLimitAlgorithm;
  /** GCRA: requests a key may make at once after a quiet spell; the sliding window: the limit. */
  readonly burst: number;
  /** Bytes of process memory it decides from. */
  readonly memoryBytes: number;
  /** Width and depth of its sketches. */
  readonly dimensions: Dimensions;
  /** How far above its true count a key's count may be (see RateLimiter), or null. */
  readonly errorBound: number | null;
  /**
   * Decides a request of `cost` (default 1) for `key`, and counts it if it passes. TypeError
   * for a key that is not one, RangeError for a cost that is not an integer from 0 up.
   */
  check(key: Key, cost?: number): RateLimitDecision;
}

/** What another thread needs to `attach` a shared RateLimiter; structured-cloneable. */
export interface RateLimiterHandle {
  /** Requests a key may make per window. */
  limit: number;
  /** The window, in milliseconds. */
  windowMs: number;
  /** How the limiter decides. */
  algorithm: RateLimitAlgorithm;
  /** GCRA's burst (the sliding window: the limit). */
  burst: number;
  /** The shared windows' sketches and clock state. */
  windows: WindowsHandle;
}

const OPTION_NAMES = [
  'limit',
  'windowMs',
  'algorithm',
  'burst',
  'now',
  ...LIMIT_SKETCH_OPTION_NAMES,
];

function checkAlgorithm(value: unknown): RateLimitAlgorithm {
  if (value === undefined) return 'sliding-window';
  if (typeof value !== 'string') throw typeError('algorithm', "'sliding-window' or 'gcra'", value);
  if (value !== 'sliding-window' && value !== 'gcra') {
    throw rangeError('algorithm', "'sliding-window' or 'gcra'", value);
  }
  return value;
}

/**
 * A limiter's rule from its options, checked (each value named in the error): the limit, the
 * window, the algorithm, the burst (gcra only; `limit` for the sliding window), gcra's time grid
 * (null for the sliding window) and the span of one sketch of cells: the window, or gcra's era.
 * One check for every storage the rule runs on (here, and Redis in src/redis).
 */
export function limiterRule(options: {
  limit: unknown;
  windowMs: unknown;
  algorithm?: unknown;
  burst?: unknown;
}) {
  const limit = integerIn('limit', options.limit, 1, SATURATED);
  const windowMs = checkWindowMs(options.windowMs);
  const algorithm = checkAlgorithm(options.algorithm);
  if (algorithm !== 'gcra' && options.burst !== undefined) {
    throw new RangeError("burst applies to algorithm 'gcra' only; the sliding window has none");
  }
  const burst = integerIn('burst', options.burst ?? limit, 1, SATURATED);
  const grid = algorithm === 'gcra' ? gcraGrid(limit, windowMs, burst) : null;
  const spanMs = grid === null ? windowMs : grid.eraMs;
  return { limit, windowMs, algorithm, burst, grid, spanMs };
}

/**
 * The most a key's count in the current window may reach: the limit less the previous window's
 * count weighted by the part of the current window still to come, `fraction` being the part
 * elapsed. An integer, since counts are. The sliding window's one rule, whatever stores the
 * counts (the Redis script computes the same, in the same doubles).
 */
export function slidingCeiling(limit: number, previous: number, fraction: number): number {
  return weightedCeiling(limit, previous, 1 - fraction);
}

/**
 * What a limiter's windows are for (see Windows.create): the rule and its parameters, so that a
 * handle whose fields were changed on the way cannot read the cells by another rule.
 */
function limiterPurpose(limit: number, windowMs: number, algorithm: string, burst: number) {
  return algorithm === 'gcra' ? [3, limit, windowMs, burst] : [2, limit, windowMs];
}

export class RateLimiter implements RateDecider {
  readonly limit: number;
  readonly windowMs: number;
  readonly algorithm: RateLimitAlgorithm;
  /** Requests allowed at one instant: `burst` for gcra, `limit` for the sliding window. */
  readonly burst: number;
  private readonly windows: Windows;
  /** gcra's time grid, or null for the sliding window. */
  private readonly grid: GcraGrid | null;

  constructor(options: RateLimiterOptions);
  /** @internal Over windows made elsewhere (`attach`). */
  constructor(options: RateLimiterOptions, attached: Windows);
  constructor(options: RateLimiterOptions, attached?: Windows) {
    checkOptions(options);
    checkOptionNames('options', options, OPTION_NAMES);
    const { limit, windowMs, algorithm, burst, grid, spanMs } = limiterRule(options);
    this.limit = limit;
    this.windowMs = windowMs;
    this.algorithm = algorithm;
    this.burst = burst;
    this.grid = grid;
    if (attached !== undefined) {
      if (attached.windowMs !== spanMs) {
        throw new RangeError('handle.windows does not hold the windows of this limiter');
      }
      this.windows = attached;
    } else {
      const now = checkClock(options.now);
      const purpose = limiterPurpose(limit, windowMs, algorithm, burst);
      this.windows = Windows.create(spanMs, sketchOptions(options, true), now, purpose);
    }
    // The parts of the step's rule that never change (window-step.ts).
    const step = this.windows.step;
    if (grid === null) {
      step.floor = -SATURATED;
      step.previousFloorOffset = Number.NEGATIVE_INFINITY;
      step.limit = limit;
    } else {
      // The previous era's TAT in ticks of this era; the ceiling does not depend on it.
      step.previousFloorOffset = -spanMs * grid.ticksPerMs;
      step.previousWeight = 0;
    }
  }

  /** The same limiter as the one `handle` came from, over the same shared memory. */
  static attach(handle: RateLimiterHandle, options: { now?: () => number } = {}): RateLimiter {
    checkOptions(options);
    checkOptionNames('options', options, ['now']);
    if (handle === null || typeof handle !== 'object') {
      throw typeError('handle', "a shared RateLimiter's handle", handle);
    }
    const { limit, windowMs, algorithm, burst } = handle;
    const purpose = limiterPurpose(limit, windowMs, algorithm, burst);
    const now = checkClock(options.now);
    const windows = Windows.attach('handle.windows', handle.windows, now, purpose);
    return new RateLimiter(
      algorithm === 'gcra' ? { limit, windowMs, algorithm, burst } : { limit, windowMs, algorithm },
      windows,
    );
  }

  /** What a worker_thread needs to `attach` this limiter (shared: true only). */
  get handle(): RateLimiterHandle {
    return {
      limit: this.limit,
      windowMs: this.windowMs,
      algorithm: this.algorithm,
      burst: this.burst,
      windows: this.windows.handle,
    };
  }

  /** Which engine the sketches run on. */
  get engine(): EngineName {
    return this.windows.current.engine;
  }

  /** Bytes of the three sketches. */
  get memoryBytes(): number {
    return this.windows.memoryBytes;
  }

  /** One sketch's shape: width, depth, epsilon = e / width, delta = e^-depth. */
  get dimensions(): Dimensions {
    const { width, depth } = this.windows.current;
    return dimensionsOf(width, depth);
  }

  /**
   * Sliding window: how far above its true count a key's count in the current window may be,
   * with probability 1 - delta (epsilon times the window's total). null for gcra, whose cells
   * hold times: a collision can only make a key wait, never pass early.
   */
  get errorBound(): number | null {
    return this.grid === null ? this.windows.current.errorBound : null;
  }

  /**
   * Decides a request of `cost` (default 1) for `key`, and counts it if it passes. A cost of 0
   * counts nothing and tells where the key stands.
   */
  check(key: Key, cost = 1): RateLimitDecision {
    checkCount('cost', cost, 0);
    const windows = this.windows;
    windows.begin(key);
    return this.grid === null
      ? this.slidingWindow(windows, key, cost)
      : this.gcra(windows, this.grid, key, cost);
  }

  private slidingWindow(windows: Windows, key: Key, cost: number) {
    const step = windows.step;
    // The previous window weighted by the part of the current one still to come: the ceiling
    // is slidingCeiling(limit, previous, fraction), in the step (one engine call).
    step.previousWeight = 1 - windows.fraction;
    step.add = cost;
    step.cost = cost;
    step.elapsedMs = windows.time - windows.start;
    const found = windows.runStep(key);
    const ceiling = step.ceiling;
    let count: number;
    let allowed: boolean;
    if (cost === 0) {
      count = found;
      allowed = count <= ceiling;
    } else {
      allowed = found <= ceiling;
      count = allowed ? found : found - cost;
    }
    return slidingDecision(this, step, count, allowed);
  }

  private gcra(windows: Windows, grid: GcraGrid, key: Key, cost: number) {
    const { ticksPerMs, intervalTicks, horizonTicks } = grid;
    const step = windows.step;
    const elapsedMs = windows.time - windows.start;
    const nowTicks = Math.floor(elapsedMs * ticksPerMs);
    // The TAT is the later of the previous era's and now; a request passes while it stays
    // within now + the horizon.
    step.floor = nowTicks;
    step.limit = nowTicks + horizonTicks;
    const estimateOnly = cost === 0 || cost > this.burst;
    const by = estimateOnly ? 0 : cost * intervalTicks;
    step.add = by;
    step.cost = cost;
    step.elapsedMs = elapsedMs;
    const found = windows.runStep(key);
    let tat: number;
    let allowed: boolean;
    if (estimateOnly) {
      tat = found;
      allowed = cost === 0;
    } else {
      allowed = found <= step.ceiling;
      tat = allowed ? found : found - by;
    }
    return gcraDecision(this, grid, step, tat, allowed);
  }
}

/** What a decision needs of its limiter. */
export interface LimiterRule {
  readonly limit: number;
  /** The window (the sliding window's; GCRA's decision does not read it). */
  readonly windowMs: number;
  /** Requests allowed at one instant (GCRA's decision reads it). */
  readonly burst: number;
}

/**
 * GCRA's decision, from the key's TAT after the update (or as found, when it did not pass) and
 * the step's time (`floor`, now in ticks of the era) and cost. Shared by every storage the rule
 * runs on, as slidingDecision is.
 */
export function gcraDecision(
  rule: LimiterRule,
  grid: GcraGrid,
  step: WindowStep,
  tat: number,
  allowed: boolean,
): RateLimitDecision {
  const { ticksPerMs, intervalTicks, horizonTicks } = grid;
  const { burst } = rule;
  const nowTicks = step.floor;
  const cost = step.cost;
  const ceiling = nowTicks + horizonTicks;
  const remaining = Math.floor((ceiling - tat) / intervalTicks);
  const resetMs = Math.ceil((tat - nowTicks) / ticksPerMs);
  let retryAfterMs = 0;
  if (!allowed) {
    retryAfterMs = cost > burst ? Number.POSITIVE_INFINITY : 1;
    if (cost <= burst) {
      // Whole milliseconds covering the ticks to wait (checked in integers: a quotient just
      // above a whole number may round down to it).
      const waitTicks = tat + cost * intervalTicks - ceiling;
      retryAfterMs = Math.max(1, Math.ceil(waitTicks / ticksPerMs));
      if (retryAfterMs * ticksPerMs < waitTicks) retryAfterMs++;
    }
  }
  return decision(allowed, rule.limit, remaining, resetMs, retryAfterMs);
}

/**
 * The sliding window's decision, from what the step read (the key's count in the previous
 * window, the ceiling, the time elapsed in the current window, the cost) and the key's count in
 * the current one (after the update if it passed), and whether it passed. Shared by every
 * storage the rule runs on (local and shared sketches here, Redis in src/redis), so each
 * answers the same.
 */
export function slidingDecision(
  rule: LimiterRule,
  step: WindowStep,
  count: number,
  allowed: boolean,
): RateLimitDecision {
  const { limit, windowMs } = rule;
  const previous = step.previous;
  const elapsed = step.elapsedMs;
  const cost = step.cost;
  const resetMs = count > 0 ? 2 * windowMs - elapsed : previous > 0 ? windowMs - elapsed : 0;
  let retryAfterMs = 0;
  if (!allowed) {
    const room = limit - count - cost;
    if (cost > limit) retryAfterMs = Number.POSITIVE_INFINITY;
    else {
      // When the weighted previous window has fallen enough (room >= 0), or else when the
      // current window, become the previous one, has.
      const waitMs =
        room >= 0
          ? windowMs * (1 - room / previous) - elapsed
          : windowMs * (2 - (limit - cost) / count) - elapsed;
      retryAfterMs = Math.max(1, Math.ceil(waitMs));
      // The decision's own floating-point weighting may round the other way at that very
      // millisecond (2.0000000000000004 carried, or 380.00000000000006 ms to wait): the
      // first millisecond at which the decision itself says yes.
      while (!slidingPasses(rule, previous, count, cost, elapsed + retryAfterMs)) {
        retryAfterMs++;
      }
      while (
        retryAfterMs > 1 &&
        slidingPasses(rule, previous, count, cost, elapsed + retryAfterMs - 1)
      ) {
        retryAfterMs--;
      }
    }
  }
  return decision(allowed, limit, Math.max(0, step.ceiling - count), resetMs, retryAfterMs);
}

/**
 * Whether a request of `cost` passes `elapsedMs` after the start of the current window, had the
 * key sent nothing more: the decision's own arithmetic, in this window or the next.
 */
function slidingPasses(
  { limit, windowMs }: LimiterRule,
  previous: number,
  count: number,
  cost: number,
  elapsedMs: number,
): boolean {
  if (elapsedMs >= 2 * windowMs) return cost <= limit;
  if (elapsedMs >= windowMs) {
    const fraction = (elapsedMs - windowMs) / windowMs;
    return Math.floor(limit - count * (1 - fraction)) >= cost;
  }
  return Math.floor(limit - previous * (1 - elapsedMs / windowMs)) >= count + cost;
}

function decision(
  allowed: boolean,
  limit: number,
  remaining: number,
  resetMs: number,
  retryAfterMs: number,
): RateLimitDecision {
  return { allowed, limit, remaining, resetMs, retryAfterMs };
}
