/**
 * Inflight: how many of a key's requests (connections, jobs) are in progress, in fixed memory,
 * and guards that give them back. pingora-limits' `Inflight`, without its leak (a guard there
 * can be incremented and then releases only what it first took).
 *
 * The count is a plain Count-Min sketch (it must go down as well as up): `acquire` adds, the
 * guard's `release` subtracts exactly what was added, once. The estimate is never below the
 * number of guards held (strict turnstile: a key's count never goes below zero, since each
 * release follows its acquire), and returns to exactly 0 for every key once every guard is
 * released.
 *
 * `tryAcquire` adds, reads the estimate, and takes the amount back at once if it is over the
 * limit: add, check, undo, in the same call, so no undo is ever lost, and the count never stays
 * above the limit because of one. Across threads it never lets more than `limit` in at once:
 * of the guards held at any moment, the one whose add finished last read the estimate after
 * that, when every one of them was added in every row and none released, so its estimate was
 * at least their number, and it passed only if that was at most `limit`. (Two threads that add at once may both see the other
 * and both give up: a refusal the limit did not require, never an admission it forbids.)
 *
 * A guard that is never released holds its amount for good: the key counts it until the
 * process ends, as a leaked connection would (pingora's guard is released when Rust drops it;
 * JavaScript has no such moment). Release guards in `finally`, or with `using`. With
 * `reclaimLeaked: true`, a guard garbage collected without release is given back by a
 * FinalizationRegistry, some time after the collection, if the process lives long enough (the
 * JavaScript engine promises neither when nor that finalizers run), and `leaked` counts it, so
 * that a leak shows and heals. It is opt-in because it is the dearest part of a guard: measured,
 * registering and unregistering a guard costs more than the rest of acquire and release
 * together (about 500 against 400 ns).
 */
import { checkOptionNames, typeError } from '../errors.js';
import type { Key } from '../hash/key-hasher.js';
import { CountMinSketch } from '../sketch/count-min.js';
import { type Dimensions, dimensionsOf } from '../sketch/dimensions.js';
import type { EngineName, SketchHandle } from '../sketch/sketch-options.js';
import {
  checkCount,
  checkOptions,
  LIMIT_SKETCH_OPTION_NAMES,
  type LimitSketchOptions,
  sketchOptions,
} from './options.js';

/** Options of `new Inflight`: the sketch's (see LimitSketchOptions), and `reclaimLeaked`. */
export interface InflightOptions extends LimitSketchOptions {
  /**
   * Give back the amount of a guard that is garbage collected without release, and count it in
   * `leaked`. Default false (a guard never released holds its amount for good).
   */
  reclaimLeaked?: boolean;
}

/** What another thread needs to `attach` a shared Inflight; structured-cloneable. */
export interface InflightHandle {
  /** The handle of its plain shared sketch. */
  sketch: SketchHandle;
}

/** What a collected guard must give back: held by the registry, not by the guard. */
interface Holding {
  h1: number;
  h2: number;
  n: number;
}

/** @internal What a guard gives its amount back to: an Inflight, or a fleet's local-first one. */
export interface GuardOwner {
  giveBack(guard: InflightGuard, h1: number, h2: number, n: number): void;
}

/**
 * What counts requests in progress for a limit (the HTTP rules and the proxy take any): an
 * Inflight here, or a local-first inflight shared by a fleet through Redis.
 */
export interface InflightCounter {
  /** Bytes of process memory it counts in. */
  readonly memoryBytes: number;
  /** Width and depth of its sketch. */
  readonly dimensions: Dimensions;
  /** Requests in progress, over every key. */
  readonly total: number;
  /** How far above the guards held a key's estimate may be, w.p. 1 - delta (epsilon * total). */
  readonly errorBound: number;
  /** The key's requests in progress: never below the guards held for it. */
  estimate(key: Key): number;
  /**
   * Counts `n` (default 1) more in progress for `key`; the guard gives them back. TypeError for
   * a key that is not one, RangeError for an `n` that is not an integer from 1 up.
   */
  acquire(key: Key, n?: number): InflightGuard;
  /**
   * As `acquire`, if the key's count stays within `limit`; else null, with nothing held.
   * RangeError for a `limit` or `n` that is not an integer from 1 up.
   */
  tryAcquire(key: Key, limit: number, n?: number): InflightGuard | null;
}

/**
 * One acquisition: `release()` (or `[Symbol.dispose]()`) gives it back, exactly once. It keeps
 * the key's hash, not the key, so that what it gives back goes to the cells it was added to.
 */
export class InflightGuard {
  /** The key's estimate just after acquiring (this acquisition included). */
  readonly count: number;
  private owner: GuardOwner | null;
  private readonly h1: number;
  private readonly h2: number;
  private readonly n: number;

  /** @internal */
  constructor(owner: GuardOwner, h1: number, h2: number, n: number, count: number) {
    this.count = count;
    this.owner = owner;
    this.h1 = h1;
    this.h2 = h2;
    this.n = n;
  }

  /** Whether this guard still holds its amount. */
  get held(): boolean {
    return this.owner !== null;
  }

  /** Gives back what this guard acquired; later calls do nothing. */
  release(): void {
    const owner = this.owner;
    if (owner === null) return;
    this.owner = null;
    owner.giveBack(this, this.h1, this.h2, this.n);
  }

  /** `release()`, for `using guard = inflight.acquire(key)`. */
  [Symbol.dispose](): void {
    this.release();
  }
}

/**
 * Requests in progress per key, in fixed memory: `acquire` counts, the guard it returns gives
 * back, exactly once. Never below the guards held for a key; exactly 0 again once all are
 * released. `shared: true` counts for every worker_thread (`handle`, `Inflight.attach`).
 */
export class Inflight implements InflightCounter {
  /** @internal */
  readonly sketch: CountMinSketch;
  /** Gives back guards collected unreleased (`reclaimLeaked`), or null. */
  private readonly registry: FinalizationRegistry<Holding> | null;
  private leakedGuards = 0;

  constructor(options: InflightOptions = {}, attached?: CountMinSketch) {
    checkOptions(options);
    checkOptionNames('options', options, [...LIMIT_SKETCH_OPTION_NAMES, 'reclaimLeaked']);
    const reclaim = options.reclaimLeaked ?? false;
    if (typeof reclaim !== 'boolean') throw typeError('reclaimLeaked', 'a boolean', reclaim);
    this.sketch = attached ?? new CountMinSketch(sketchOptions(options, false));
    this.registry = reclaim
      ? new FinalizationRegistry<Holding>((holding) => {
          this.leakedGuards++;
          this.sketch.kernel.add(holding.h1, holding.h2, -holding.n);
        })
      : null;
  }

  /** The same Inflight as the one `handle` came from, over the same shared memory. */
  static attach(handle: InflightHandle, options: { reclaimLeaked?: boolean } = {}): Inflight {
    checkOptions(options);
    checkOptionNames('options', options, ['reclaimLeaked']);
    if (handle === null || typeof handle !== 'object') {
      throw typeError('handle', "a shared Inflight's handle", handle);
    }
    const sketch = CountMinSketch.attach(handle.sketch);
    if (sketch.conservative) throw new RangeError('handle.sketch must be a plain sketch');
    return new Inflight({ reclaimLeaked: options.reclaimLeaked }, sketch);
  }

  /** What a worker_thread needs to `attach` this Inflight (shared: true only). */
  get handle(): InflightHandle {
    return { sketch: this.sketch.handle };
  }

  /** Which code runs its sketch: 'wasm' or 'js'. */
  get engine(): EngineName {
    return this.sketch.engine;
  }

  get memoryBytes(): number {
    return this.sketch.memoryBytes;
  }

  /** Width and depth of its sketch. */
  get dimensions(): Dimensions {
    return dimensionsOf(this.sketch.width, this.sketch.depth);
  }

  get total(): number {
    return this.sketch.total;
  }

  get errorBound(): number {
    return this.sketch.errorBound;
  }

  /** Guards given back because they were collected without release (`reclaimLeaked` only). */
  get leaked(): number {
    return this.leakedGuards;
  }

  /** Adds `n` (default 1) to `key`; the guard gives it back. */
  acquire(key: Key, n = 1): InflightGuard {
    checkCount('n', n, 1);
    const sketch = this.sketch;
    const hasher = sketch.hasher;
    hasher.hash(key);
    const h1 = hasher.h1;
    const h2 = hasher.h2;
    const count = this.add(h1, h2, n);
    return this.guard(h1, h2, n, count);
  }

  /**
   * Adds n; the estimate after. In shared memory, read again once the add is done: the add's
   * own result, the least of its rows' new values, may be from rows read while other threads
   * were between rows (A adds to row 1, B to rows 1 and 2, A to row 2: both see 1 as the least
   * of what they wrote), so it can miss a guard that another thread already holds. A read after
   * the whole add cannot: each row then holds every add that finished before it.
   */
  private add(h1: number, h2: number, n: number): number {
    const sketch = this.sketch;
    const count = sketch.kernel.add(h1, h2, n);
    return sketch.shared ? sketch.kernel.estimate(h1, h2) : count;
  }

  /**
   * Adds `n` (default 1) to `key` if the key's estimate stays within `limit`; else null, with
   * nothing held.
   */
  tryAcquire(key: Key, limit: number, n = 1): InflightGuard | null {
    checkCount('limit', limit, 1);
    checkCount('n', n, 1);
    const sketch = this.sketch;
    const hasher = sketch.hasher;
    hasher.hash(key);
    const h1 = hasher.h1;
    const h2 = hasher.h2;
    const count = this.add(h1, h2, n);
    if (count > limit) {
      sketch.kernel.add(h1, h2, -n);
      return null;
    }
    return this.guard(h1, h2, n, count);
  }

  /** The key's estimate: never below the guards held for it. */
  estimate(key: Key): number {
    return this.sketch.estimate(key);
  }

  private guard(h1: number, h2: number, n: number, count: number): InflightGuard {
    const guard = new InflightGuard(this, h1, h2, n, count);
    if (this.registry !== null) this.registry.register(guard, { h1, h2, n }, guard);
    return guard;
  }

  /** @internal A guard's release: its amount back. */
  giveBack(guard: InflightGuard, h1: number, h2: number, n: number): void {
    if (this.registry !== null) this.registry.unregister(guard);
    this.sketch.kernel.add(h1, h2, -n);
  }
}
