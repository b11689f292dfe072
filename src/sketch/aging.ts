/**
 * Aging: counts that fade, so that a long-running process tracks what is hot now, not since it
 * started (Caffeine's FrequencySketch halves its counters every `sampleSize` additions; Einziger,
 * Friedman, Manes, "TinyLFU", ACM ToS 2017, section 3.3, the reset).
 *
 * Scaling. `decay(factor)` multiplies every cell by `factor` taken to 20 binary places, rounded
 * down (`scaleOf`; 0.5 is exact), and rounds each cell down: floor(c * n / 2^20), exact in
 * doubles since c * n < 2^51. Floor is superadditive (floor(f(a + b)) >= floor(fa) + floor(fb)),
 * so a cell, the sum of the counts of the keys that share it, stays at least the sum of those
 * counts each decayed the same way: an estimate never falls below the key's count decayed by
 * the same rule. It can exceed it by its old excess times the factor, plus at most 1 from the
 * rounding of each decay (with halving: an excess bounded by errorBound + 2). The total is
 * rounded up, so that errorBound still bounds the excess. A saturated cell ("at least 2^31 - 1")
 * stays saturated: what it stands for is unknown, so is its half.
 *
 * Half-lives. `halfLife: { events: N }` halves after every N events (the sum of the amounts
 * incremented); `halfLifeMs` halves by the clock (`now`, injectable), every halfLifeMs from the
 * moment the sketch was made, applied by the first operation that sees it due (several
 * half-lives missed are applied at once). Nothing runs in the background: no timer keeps the
 * process alive, and a sketch nobody touches does not change until it is next used.
 *
 * Threads. Exactly one thread applies each halving: in shared memory, the events are summed
 * in one word (each thread adds its own in chunks of at most N / 64, so the word is written a
 * few times per halving, not on every event) and the thread whose add carries the sum past a
 * multiple of N halves; by the clock, a compare-and-set of the count of halvings done elects
 * the thread that applies the ones due. A halving scales each cell by a compare-and-set from
 * the value it read, so an increment racing with it lands before it (and is halved) or after
 * it (whole): never lost entirely.
 */
import { checkOptionNames, integerIn, rangeError, typeError } from '../errors.js';

/** 1.0 in the 20-binary-place fixed point of scale factors. */
export const SCALE_ONE = 2 ** 20;

/** A decay factor in [0, 1] as a multiplier of SCALE_ONE, rounded down; `name` for errors. */
export function scaleOf(factor: unknown, name = 'factor'): number {
  if (typeof factor !== 'number') throw typeError(name, 'a number in [0, 1]', factor);
  if (!(factor >= 0 && factor <= 1)) throw rangeError(name, 'a number in [0, 1]', factor);
  return Math.floor(factor * SCALE_ONE);
}

export interface AgingOptions {
  /** Halve every N events (the sum of the amounts incremented). */
  halfLife?: {
    /** N: an integer from 1 up. */
    events: number;
  };
  /** Halve every halfLifeMs milliseconds of the clock, from creation. */
  halfLifeMs?: number;
  /** The clock, in milliseconds, for halfLifeMs. Default Date.now. */
  now?: () => number;
}

export const AGING_OPTION_NAMES: readonly string[] = ['halfLife', 'halfLifeMs', 'now'];

/** What another thread needs to share the aging of a shared sketch. */
export interface AgingHandle {
  /** The events summed, the halvings announced and due, and the clock's origin. */
  state: SharedArrayBuffer;
  /** The half-life in events (`halfLife.events`), if it ages by events. */
  events?: number;
  /** The half-life in milliseconds of the clock, if it ages by the clock. */
  halfLifeMs?: number;
}

/**
 * Shared state: Int32 word 0 the events summed, word 1 the halvings announced (see
 * `halvings`), f64 at 8 the origin, BigInt64 at 16 the halvings due by the clock.
 */
const STATE_BYTES = 24;
const MAX_EVENTS = 2 ** 30;

export class Aging {
  private readonly events: number;
  private readonly halfLifeMs: number;
  private readonly now: () => number;
  private readonly state: SharedArrayBuffer | null;
  private readonly sum: Int32Array | null;
  private readonly done: BigInt64Array | null;
  private readonly origin: number;
  private readonly chunk: number;
  /** Events counted here and not yet added to the shared sum (or, local, since the halving). */
  private pending = 0;
  /** Halvings this object returned (for tests of the election). @internal */
  applied = 0;
  private readonly announced: Int32Array | null;
  /** Halvings applied by the clock (local), and the time the next one is due. */
  private clockHalvings = 0;
  private nextDueMs: number;

  private constructor(
    events: number,
    halfLifeMs: number,
    now: () => number,
    state: SharedArrayBuffer | null,
  ) {
    this.events = events;
    this.halfLifeMs = halfLifeMs;
    this.now = now;
    this.state = state;
    this.sum = state === null ? null : new Int32Array(state, 0, 1);
    this.done = state === null ? null : new BigInt64Array(state, 16, 1);
    this.announced = state === null ? null : new Int32Array(state, 4, 1);
    this.chunk = state === null ? 1 : Math.max(1, Math.min(1024, Math.floor(events / 64)));
    if (halfLifeMs > 0) {
      const origins = state === null ? null : new Float64Array(state, 8, 1);
      if (origins !== null && origins[0] === 0) origins[0] = now();
      this.origin = origins === null ? now() : origins[0];
      this.nextDueMs = this.origin + halfLifeMs;
    } else {
      this.origin = 0;
      this.nextDueMs = Number.POSITIVE_INFINITY;
    }
  }

  /** The aging the options ask for, or null; validated, with the option named. */
  static from(options: AgingOptions, shared: boolean): Aging | null {
    const { halfLife, halfLifeMs } = options;
    if (options.now !== undefined && typeof options.now !== 'function') {
      throw typeError('now', 'a function returning milliseconds', options.now);
    }
    if (options.now !== undefined && halfLifeMs === undefined) {
      throw new RangeError('now is the clock of halfLifeMs: pass it with halfLifeMs');
    }
    if (halfLife === undefined && halfLifeMs === undefined) return null;
    if (halfLife !== undefined && halfLifeMs !== undefined) {
      throw new RangeError('halfLife and halfLifeMs are two ways to age a sketch; pass only one');
    }
    let events = 0;
    if (halfLife !== undefined) {
      if (halfLife === null || typeof halfLife !== 'object') {
        throw typeError('halfLife', 'an object like { events: 1000000 }', halfLife);
      }
      checkOptionNames('halfLife', halfLife, ['events']);
      events = integerIn('halfLife.events', halfLife.events, 1, MAX_EVENTS);
    }
    const ms =
      halfLifeMs === undefined
        ? 0
        : integerIn('halfLifeMs', halfLifeMs, 1, Number.MAX_SAFE_INTEGER);
    const state = shared ? new SharedArrayBuffer(STATE_BYTES) : null;
    return new Aging(events, ms, options.now ?? Date.now, state);
  }

  /** The aging of a shared sketch's handle, in this thread. */
  static attach(handle: AgingHandle, now: (() => number) | undefined): Aging {
    if (handle === null || typeof handle !== 'object') {
      throw typeError('handle.aging', "a shared sketch's aging", handle);
    }
    if (!(handle.state instanceof SharedArrayBuffer) || handle.state.byteLength !== STATE_BYTES) {
      throw typeError(
        'handle.aging.state',
        `a SharedArrayBuffer of ${STATE_BYTES} bytes`,
        handle.state,
      );
    }
    const aging = Aging.from(
      handle.events !== undefined
        ? { halfLife: { events: handle.events } }
        : { halfLifeMs: handle.halfLifeMs, now },
      false,
    );
    if (aging === null) throw typeError('handle.aging', 'events or halfLifeMs', handle);
    return new Aging(aging.events, aging.halfLifeMs, aging.now, handle.state);
  }

  get handle(): AgingHandle | undefined {
    if (this.state === null) return undefined;
    return this.events > 0
      ? { state: this.state, events: this.events }
      : { state: this.state, halfLifeMs: this.halfLifeMs };
  }

  /**
   * Counts `events` more and returns the halvings due now, for the caller to apply: each
   * halving is returned to exactly one caller, in any thread.
   */
  due(events: number): number {
    let halvings: number;
    if (this.events > 0) halvings = this.dueByEvents(events);
    else {
      const time = this.now();
      if (time < this.nextDueMs) return 0;
      halvings = this.dueByClock(time);
    }
    if (halvings > 0) {
      this.applied += halvings;
      // Announced before the caller applies them, so that whoever keeps counts beside the
      // sketch (heavy hitters' parts) scales them too, whichever thread halved.
      if (this.announced !== null) Atomics.add(this.announced, 0, halvings);
    }
    return halvings;
  }

  /**
   * Every halving returned so far, by any thread sharing this aging (modulo 2^32, compared by
   * difference): what counts kept beside the sketch compare with the halvings they applied.
   */
  get halvings(): number {
    return this.announced === null ? this.applied : Atomics.load(this.announced, 0);
  }

  private dueByEvents(events: number): number {
    const n = this.events;
    const pending = this.pending + events;
    if (pending < this.chunk) {
      this.pending = pending;
      return 0;
    }
    this.pending = 0;
    const sum = this.sum;
    if (sum === null) {
      // One thread: the events since the last halving, exactly.
      const halvings = Math.floor(pending / n);
      this.pending = pending - halvings * n;
      return halvings;
    }
    // The multiples of n this add carries the shared sum past are this thread's to apply; the
    // sum is brought back down by as many n, so it stays small.
    const before = Atomics.add(sum, 0, pending);
    const halvings = Math.floor((before + pending) / n) - Math.floor(before / n);
    if (halvings > 0) Atomics.sub(sum, 0, halvings * n);
    return halvings;
  }

  private dueByClock(time: number): number {
    if (typeof time !== 'number' || time - time !== 0) {
      throw typeError('now()', 'a finite number of milliseconds', time);
    }
    const due = Math.floor((time - this.origin) / this.halfLifeMs);
    this.nextDueMs = this.origin + (due + 1) * this.halfLifeMs;
    const done = this.done;
    if (done === null) {
      const halvings = Math.max(0, due - this.clockHalvings);
      this.clockHalvings = Math.max(due, this.clockHalvings);
      return halvings;
    }
    for (;;) {
      const seen = Atomics.load(done, 0);
      const already = Number(seen);
      if (already >= due) return 0;
      if (Atomics.compareExchange(done, 0, seen, BigInt(due)) === seen) return due - already;
    }
  }
}
