/**
 * A rate limiter whose windows live in Redis, for a fleet: the rules of limits/rate-limiter.ts
 * (sliding window, GCRA) over one Redis string per aligned window (`hotcount:{name}:w:<n>`; for
 * GCRA, per era), each expiring at the end of the window after it, so Redis holds two windows of
 * cells per limiter, whatever the number of clients. Windows are aligned to the clock, so
 * processes and hosts that share a clock share windows; `now` is injectable.
 *
 * Two modes:
 * - Direct (the default): each check is decided in a script in Redis (scripts.ts, WINDOW_SCRIPT),
 *   the admission and the update atomic, in one round trip; the checks of a tick share one
 *   script call (window-batch.ts). The decision's fields are computed here by the local
 *   limiter's own functions. With the same secret, dimensions and clock, it answers
 *   a stream exactly as a local RateLimiter does (a test checks every decision).
 * - Local-first (`localFirst: { syncMs }`, sliding window only): checks decide from process
 *   memory, the last snapshot of the fleet's windows plus this process's own unsent counts
 *   (local-first-windows.ts), and never wait for Redis; every `syncMs` one round trip pushes and
 *   pulls. The fleet may overshoot the limit by what other processes passed since their last
 *   push (docs/redis.md: the bound). GCRA has no local-first mode: its cells hold times, and two
 *   processes that each move a TAT from an old value to now cannot add their moves up.
 *
 * When Redis fails or does not answer within `timeoutMs`, the limiter goes stale (`status`,
 * the 'stale' and 'sync' events) and decides by `onStale`: 'local' (the default) by what this
 * process knows (local-first: the last snapshot and its own counts; direct: a local RateLimiter
 * of the same shape, started at the first failure), 'open' lets requests through, 'closed'
 * refuses them. While stale, direct checks do not each wait: one at a time asks Redis, the
 * others decide by the policy at once. Bad input and a refused shape are errors, never a policy
 * decision.
 */
import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { GcraGrid, Key } from '../core.js';
import {
  checkClock,
  checkCount,
  checkOptionNames,
  gcraDecision,
  integerIn,
  limiterRule,
  type RateDecider,
  type RateLimitAlgorithm,
  type RateLimitDecision,
  RateLimiter,
  readClock,
  SATURATED,
  slidingCeiling,
  slidingDecision,
  typeError,
  WindowStep,
} from '../core.js';
import { clamp } from './delta.js';
import { LocalFirstWindows } from './local-first-windows.js';
import { PLACE_OPTION_NAMES, type PlaceOptions, SketchPlace } from './place.js';
import {
  checkStalePolicy,
  Staleness,
  type StalePolicy,
  SyncLoop,
  type SyncStatus,
  syncTimeoutMs,
  withDeadline,
} from './staleness.js';
import { WindowBatch } from './window-batch.js';

/**
 * Options of `new RedisRateLimiter`: its place in Redis (PlaceOptions), the rule as for a
 * RateLimiter, the mode and what to do while Redis is away.
 */
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
  /** Decide in process, syncing with Redis every `syncMs` (sliding window only). */
  localFirst?: {
    /** Milliseconds between two syncs. Default 100. */
    syncMs?: number;
  };
  /**
   * How long Redis may take to answer a check (direct) or a sync (local-first) before the
   * limiter goes stale. Default 1000 ms (local-first: 4 * syncMs, at least 1000).
   */
  timeoutMs?: number;
  /** What to decide while stale: 'local' (default), 'open' or 'closed'. */
  onStale?: StalePolicy;
}

const OPTION_NAMES = [
  ...PLACE_OPTION_NAMES,
  'limit',
  'windowMs',
  'algorithm',
  'burst',
  'now',
  'localFirst',
  'timeoutMs',
  'onStale',
];

/**
 * A rate limiter shared by a fleet, its windows in Redis. Direct (the default): each check is
 * one atomic round trip. Local-first (`localFirst: { syncMs }`, sliding window only): checks
 * decide from process memory and a sync every `syncMs` pushes and pulls, so the fleet may
 * overshoot the limit by what other processes passed since their last push. Emits 'stale' (with
 * the error) when Redis fails or does not answer in time and 'sync' when it answers again;
 * `onStale` says what it decides meanwhile.
 */
export class RedisRateLimiter extends EventEmitter {
  /** The limiter's name: its keys in Redis are `hotcount:{name}:...`. */
  readonly name: string;
  /** Requests per window per key. */
  readonly limit: number;
  /** The window, in milliseconds. */
  readonly windowMs: number;
  /** 'sliding-window' or 'gcra'. */
  readonly algorithm: RateLimitAlgorithm;
  /** Requests allowed at one instant: `burst` for gcra, `limit` for the sliding window. */
  readonly burst: number;
  /** Counters per row of each window's cells. */
  readonly width: number;
  /** Rows of each window's cells. */
  readonly depth: number;
  /**
   * How long Redis may take to answer a check (direct) or a sync (local-first) before the
   * limiter goes stale, in ms.
   */
  readonly timeoutMs: number;
  /** What it decides while stale: 'local', 'open' or 'closed'. */
  readonly onStale: StalePolicy;
  /** Milliseconds between syncs (local-first), or null (direct). */
  readonly syncMs: number | null;
  private readonly place: SketchPlace;
  private readonly now: () => number;
  /** gcra's time grid, or null for the sliding window. */
  private readonly grid: GcraGrid | null;
  /** A window's (gcra: an era's) length, in ms: Redis holds one string per span. */
  private readonly spanMs: number;
  private readonly staleness: Staleness;
  /** Local-first only: the windows in process memory, and their sync. */
  private readonly windows: LocalFirstWindows | null;
  private readonly loop: SyncLoop | null;
  /** Direct mode, stale, 'local': decides while Redis is away. */
  private insurance: RateLimiter | null = null;
  /** What the decisions read of a step: filled from the script's answer, or checkLocal's. */
  private readonly step = new WindowStep();
  /** Direct mode: the checks of a tick, gathered into one script call (window-batch.ts). */
  private readonly batch: WindowBatch;
  /** Direct mode, stale: whether a check is asking Redis whether it is back. */
  private probing = false;
  private readonly options: RedisRateLimiterOptions;

  /**
   * Throws a TypeError or RangeError that names the option at fault (RangeError too for
   * `localFirst` with gcra). Sends nothing to Redis; local-first, it starts the sync timer (one
   * that does not keep the process alive), which `close` stops.
   */
  constructor(options: RedisRateLimiterOptions) {
    super();
    if (options === null || typeof options !== 'object') {
      throw typeError('options', 'an object with redis, name, secret, limit and windowMs', options);
    }
    checkOptionNames('options', options, OPTION_NAMES);
    const { limit, windowMs, algorithm, burst, now, localFirst, timeoutMs, onStale, ...where } =
      options;
    this.options = options;
    const rule = limiterRule({ limit, windowMs, algorithm, burst });
    this.limit = rule.limit;
    this.windowMs = rule.windowMs;
    this.algorithm = rule.algorithm;
    this.burst = rule.burst;
    this.grid = rule.grid;
    this.spanMs = rule.spanMs;
    this.onStale = checkStalePolicy(onStale);
    if (localFirst !== undefined) {
      if (localFirst === null || typeof localFirst !== 'object') {
        throw typeError('localFirst', 'an object { syncMs }', localFirst);
      }
      checkOptionNames('localFirst', localFirst, ['syncMs']);
      if (this.grid !== null) {
        throw new RangeError(
          "localFirst runs the sliding window only: gcra's cells hold times, which processes " +
            'cannot add up (use algorithm sliding-window, or gcra without localFirst)',
        );
      }
      this.syncMs = integerIn('localFirst.syncMs', localFirst.syncMs ?? 100, 1, 3_600_000);
    } else {
      this.syncMs = null;
    }
    const defaultTimeoutMs = this.syncMs === null ? 1000 : syncTimeoutMs(this.syncMs);
    this.timeoutMs = integerIn('timeoutMs', timeoutMs ?? defaultTimeoutMs, 1, 3_600_000);
    // One rule name for both modes: a direct and a local-first limiter of the same name share
    // windows (conservative raises and plain adds both keep every cell at or above each of its
    // keys' counts).
    const ruleName =
      this.grid === null
        ? `sliding_${this.limit}_${this.windowMs}`
        : `gcra_${this.limit}_${this.windowMs}_${this.burst}`;
    const place = new SketchPlace(where, ruleName, 'limiter', 'limit, window or shape');
    this.place = place;
    const grid = this.grid;
    this.batch = new WindowBatch(
      place,
      grid === null
        ? { algorithm: 's', rule: this.limit, horizon: 0 }
        : { algorithm: 'g', rule: this.spanMs * grid.ticksPerMs, horizon: grid.horizonTicks },
    );
    this.name = place.name;
    this.width = place.width;
    this.depth = place.depth;
    this.now = checkClock(now);
    if (this.syncMs !== null) {
      const pushed = place.key(`pushed:${randomUUID()}`);
      const windows = new LocalFirstWindows(place, this.windowMs, this.now, pushed);
      this.windows = windows;
      this.loop = new SyncLoop(this, this.syncMs, async () => {
        await place.checkShape();
        await windows.sync(this.timeoutMs);
      });
      this.staleness = this.loop.staleness;
    } else {
      this.windows = null;
      this.loop = null;
      this.staleness = new Staleness(this);
    }
  }

  /** Whether Redis answered last time, when, and the failure if not. */
  get status(): SyncStatus {
    return this.staleness.status;
  }

  /**
   * Local-first only: this limiter as a synchronous RateDecider (`check` is `checkLocal`), for
   * what decides with a RateLimiter (the HTTP middleware's rule, the proxy).
   */
  get local(): RateDecider {
    if (this.windows === null) {
      throw new TypeError('local needs the limiter made with localFirst: { syncMs }');
    }
    const { width, depth } = this;
    const dimensions = this.place.dimensions;
    return {
      limit: this.limit,
      windowMs: this.windowMs,
      algorithm: this.algorithm,
      burst: this.burst,
      // Two snapshots and three deltas of two arrays each.
      memoryBytes: 8 * 4 * width * depth,
      dimensions,
      errorBound: null,
      check: (key: Key, cost = 1) => this.checkLocal(key, cost),
    };
  }

  /** Bytes this limiter holds in Redis: two windows of cells. */
  get redisBytes(): number {
    return 2 * 4 * this.width * this.depth;
  }

  /** The Redis key of window number `window`. */
  windowKey(window: number): string {
    return this.place.windowKey(window);
  }

  /**
   * Decides a request of `cost` (default 1) for `key` and counts it if it passes: the decision
   * object of RateLimiter.check. A cost of 0 counts nothing. Local-first, it resolves without
   * waiting for Redis (`checkLocal` is the same, synchronous).
   */
  check(key: Key, cost = 1): Promise<RateLimitDecision> {
    try {
      if (this.windows !== null) return Promise.resolve(this.checkLocal(key, cost));
      checkCount('cost', cost, 0);
      const cells = this.place.cellsOf(key);
      const time = readClock(this.now);
      // While stale, one check at a time asks Redis (a probe); the others decide at once, so
      // that a Redis that is away or paused does not hold every request for timeoutMs.
      const stale = this.staleness.stale;
      if (stale && this.probing) return Promise.resolve(this.staleDecision(key, cost));
      this.probing = stale;
      // Promises chained, not awaited: at 64 checks in flight, every layer costs.
      return withDeadline(this.decide(cells, time, cost), this.timeoutMs).then(
        (decision) => {
          if (stale) this.probing = false;
          this.staleness.synced();
          return decision;
        },
        (error) => {
          if (stale) this.probing = false;
          if (error instanceof RangeError || error instanceof TypeError) throw error;
          this.staleness.failed(error);
          return this.staleDecision(key, cost);
        },
      );
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** The check in Redis (in one script call with its tick's others), the decision from it. */
  private async decide(cells: number[], time: number, cost: number): Promise<RateLimitDecision> {
    const { spanMs, grid, place } = this;
    const window = Math.floor(time / spanMs);
    const elapsed = time - window * spanMs;
    // The shape is checked once, before the first check; the script does not check it again.
    if (!place.shapeChecked) await place.checkShape();
    const expireMs = (window + 2) * spanMs - time;
    if (grid === null) {
      const [found, previous, ceiling] = await this.batch.check(
        window,
        expireMs,
        cost,
        elapsed / spanMs,
        cells,
      );
      const allowed = found <= ceiling;
      // A refused request was not counted: its count is what the key had.
      const count = cost === 0 || allowed ? found : found - cost;
      return slidingDecision(
        this,
        this.stepFound(previous, ceiling, cost, elapsed),
        count,
        allowed,
      );
    }
    const { ticksPerMs, intervalTicks } = grid;
    const nowTicks = Math.floor(elapsed * ticksPerMs);
    // A cost over burst can never pass: peek, as the local limiter does.
    const amount = cost > this.burst ? 0 : cost * intervalTicks;
    const [found, , ceiling, floor] = await this.batch.check(
      window,
      expireMs,
      amount,
      nowTicks,
      cells,
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
    const step = this.stepFound(0, ceiling, cost, elapsed);
    step.floor = nowTicks;
    return gcraDecision(this, grid, step, tat, allowed);
  }

  /** The step object, as a step that read `previous` and `ceiling` for `cost` would leave it. */
  private stepFound(previous: number, ceiling: number, cost: number, elapsedMs: number) {
    const step = this.step;
    step.found(previous, ceiling);
    step.cost = cost;
    step.elapsedMs = elapsedMs;
    return step;
  }

  /** Direct mode, Redis away: the decision `onStale` asks for. */
  private staleDecision(key: Key, cost: number): RateLimitDecision {
    if (this.onStale === 'local') {
      if (this.insurance === null) {
        const { redis, name, localFirst, timeoutMs, onStale, ...shape } = this.options;
        this.insurance = new RateLimiter(shape);
      }
      return this.insurance.check(key, cost);
    }
    return this.policyDecision(this.onStale === 'open', cost);
  }

  /** 'open' or 'closed': the decision without a count behind it. */
  private policyDecision(open: boolean, cost: number): RateLimitDecision {
    const limit = this.limit;
    return {
      allowed: open,
      limit,
      remaining: open ? limit : 0,
      resetMs: 0,
      retryAfterMs: open ? 0 : cost > this.burst ? Number.POSITIVE_INFINITY : this.timeoutMs,
    };
  }

  /**
   * Local-first only: the decision from process memory (the last snapshot of the fleet's
   * windows and this process's own counts), synchronous; the request is counted here if it
   * passes and pushed by the next sync.
   */
  checkLocal(key: Key, cost = 1): RateLimitDecision {
    const windows = this.windows;
    if (windows === null) {
      throw new TypeError('checkLocal needs the limiter made with localFirst: { syncMs }');
    }
    checkCount('cost', cost, 0);
    windows.advance();
    const cells = this.place.cellsInPlace(key);
    const depth = this.depth;
    const { previous: before, current: now, previousDelta, currentDelta } = windows;
    let previous = SATURATED;
    let current = SATURATED;
    for (let row = 0; row < depth; row++) {
      const cell = cells[row];
      const was = clamp(before[cell] + previousDelta.at(cell));
      if (was < previous) previous = was;
      const is = clamp(now[cell] + currentDelta.at(cell));
      if (is < current) current = is;
    }
    const limit = this.limit;
    const windowMs = this.windowMs;
    const elapsed = windows.time - windows.start;
    const ceiling = slidingCeiling(limit, previous, elapsed / windowMs);
    let allowed = current + cost <= ceiling;
    if (this.staleness.stale && this.onStale !== 'local') {
      if (this.onStale === 'closed') return this.policyDecision(false, cost);
      allowed = cost <= limit;
    }
    let count = current;
    if (allowed && cost > 0) {
      currentDelta.add(cells, depth, cost);
      count = Math.min(SATURATED, current + cost);
    }
    return slidingDecision(this, this.stepFound(previous, ceiling, cost, elapsed), count, allowed);
  }

  /**
   * Local-first: pushes this process's counts and pulls the fleet's, once; rejects when Redis
   * fails or does not answer within `timeoutMs` (the counts stay, for the next sync). A sync
   * already running is joined. Direct: resolves at once.
   */
  flush(): Promise<void> {
    return this.loop === null ? Promise.resolve() : this.loop.flush();
  }

  /** Stops the sync timer and pushes what is left (local-first; rejects if Redis cannot). */
  async close(): Promise<void> {
    if (this.loop === null) return;
    this.loop.stop();
    await this.flush();
    const windows = this.windows as LocalFirstWindows;
    if (windows.currentDelta.unsent || windows.previousDelta.unsent) await this.flush();
  }
}
