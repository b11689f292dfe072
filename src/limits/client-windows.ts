/**
 * Per-client windows: the semantics of @fastify/rate-limit's LocalStore and express-rate-limit's
 * MemoryStore, in fixed memory. A client's window starts at its first request and lasts
 * windowMs; the request that finds it over starts a new one with a count of 1. With
 * `continueExceeding`, a request over the limit starts the window again (the count goes on);
 * with `exponentialBackoff`, the same, and the time it reports doubles with each request over.
 *
 * Why not in sketch cells alone. A window's state (its start, its count) is not monotone: a
 * window that started later with fewer requests is more lenient than one that started earlier
 * with more. A cell shared by several clients can only keep the larger state, and when every row
 * of a client holds a later window of another client (with many clients, nearly every client's
 * rows do), its own count is lost: too lenient, the one error a limiter must not make. GCRA's
 * state, a time, is monotone, which is why it can live in cells (gcra.ts).
 *
 * So the state of recent clients is exact, in a table of fixed capacity (typed arrays, a slot
 * found by the key's keyed 64-bit hash, 8 slots per bucket), and every request is also counted
 * in a `Rate` (clock-aligned windows, three sketches): the backstop. When a bucket is full, a new
 * client takes the slot of an expired window, else of the window that ends first. A client whose
 * slot was taken comes back as a client whose window starts now, with the count the backstop
 * holds for it over the current and the previous aligned window: its real window started less
 * than windowMs ago (or it is held over the limit, below), so inside those two windows, and the
 * backstop's estimates are never under, so the count is at least the real one and the window
 * ends no sooner. A client held over the limit by continueExceeding or exponentialBackoff also
 * raises its "held until" time in a small max sketch (f64 cells keep the latest time hashed to
 * them; a time in the past means nothing, so nothing needs clearing), which keeps it held
 * through an eviction. A client that came back this way is marked uncertain: its window is not
 * the peers' own but one that ends no sooner, so its next windows start from the backstop too
 * (a reset to 1 at the end of ours could fall inside the peers' next window). A decrement for a
 * client a full bucket lost raises an "unsure until" time in a second max sketch, since
 * MemoryStore then holds a stale window for it or opens a new one of 0 requests, and which is
 * not known; so does a window of 0 requests pushed out of the table, which the backstop cannot
 * show. Without evictions every answer is exactly the peers'; with them, a client is never
 * let through sooner than with the peers' stores (property tests check both against models of
 * the peers' algorithms).
 *
 * Two clients whose keyed 64-bit hashes are equal would share a slot: with n clients in the
 * table, about n^2 / 2^65 (2^-35 for 4096), and the secret keeps anyone from choosing them.
 */

import { checkClock, readClock } from '../clock.js';
import { checkOptionNames, integerIn, rangeError, typeError } from '../errors.js';
import type { Key } from '../hash/key-hasher.js';
import type { SketchHasher } from '../sketch/sketch-options.js';
import { LatestTimes } from './latest-times.js';
import { type LimitSketchOptions, UNSHARED_SKETCH_OPTION_NAMES } from './options.js';
import { checkWindowMs, Rate } from './rate.js';

/** Options of `new ClientWindows`. */
export interface ClientWindowsOptions extends Omit<LimitSketchOptions, 'shared'> {
  /**
   * Length of a client's window, in milliseconds: a number >= 1 (the plugin's '285421 years' is
   * past 2^53 ms, and taken).
   */
  windowMs: number;
  /** A request over the limit starts the client's window again. Default false. */
  continueExceeding?: boolean;
  /** As continueExceeding, and the reported time doubles with each request over. Default false. */
  exponentialBackoff?: boolean;
  /** Clients whose state is kept exactly (rounded up to a multiple of 8). Default 8192. */
  capacity?: number;
  /** The clock, in milliseconds. Default Date.now, read at each call. */
  now?: () => number;
}

/** A client's state after a request, or as read. */
export interface ClientWindow {
  /** The client's requests in its window (this one included, after a hit). */
  current: number;
  /** Milliseconds until its window ends (with exponentialBackoff over the limit: the backoff). */
  ttl: number;
}

const OPTION_NAMES = [
  'windowMs',
  'continueExceeding',
  'exponentialBackoff',
  'capacity',
  'now',
  ...UNSHARED_SKETCH_OPTION_NAMES,
];

const SLOTS_PER_BUCKET = 8;
/** The most clients a table may hold: keeps a configuration typo from allocating gigabytes. */
const MAX_CAPACITY = 2 ** 24;
/** The start of a forgotten client's slot (resetKey): ended, and unlike any ended window. */
const FORGOTTEN = Number.NEGATIVE_INFINITY;
const HELD_WIDTH = 4096;
const HELD_DEPTH = 4;

/**
 * The windows a drop-in store counts in, checked: 'client' (ClientWindows, the default) or
 * 'aligned' (a Rate), and the table's capacity if given. RangeError or TypeError naming the
 * option; nothing is allocated to check them.
 */
export function checkStoreWindows(windows: unknown, capacity: unknown): 'client' | 'aligned' {
  if (windows !== undefined && windows !== 'client' && windows !== 'aligned') {
    throw rangeError('windows', "'client' or 'aligned'", windows);
  }
  if (capacity !== undefined) integerIn('capacity', capacity, 1, MAX_CAPACITY);
  return windows ?? 'client';
}

/**
 * Per-client windows of `windowMs` for one limit (see the top comment). TypeError or RangeError
 * naming the option for bad options.
 */
export class ClientWindows {
  /** Length of a client's window, in milliseconds. */
  readonly windowMs: number;
  /** Clients whose state is kept exactly. */
  readonly capacity: number;
  private readonly continueExceeding: boolean;
  private readonly exponentialBackoff: boolean;
  private readonly now: () => number;
  /** The backstop's hasher: one hash of a key serves the table and the backstop. */
  private readonly hasher: SketchHasher;
  private readonly backstop: Rate;
  /** Until when a client is held over the limit (continueExceeding, exponentialBackoff). */
  private readonly held = new LatestTimes(HELD_WIDTH, HELD_DEPTH);
  /**
   * Until when a client the table had lost was sent a decrement: MemoryStore then holds a
   * window of 0 requests from that moment, or a stale one, and which is not known.
   */
  private readonly unsure = new LatestTimes(HELD_WIDTH, HELD_DEPTH);
  /** 1 for a bucket that has given a slot to another client: a client not in it may be known. */
  private readonly evicted: Uint8Array;
  private readonly buckets: number;
  private readonly h1s: Int32Array;
  private readonly h2s: Int32Array;
  /** 1 for a slot in use. */
  private readonly used: Uint8Array;
  /** When the slot's window started (or was started again), in ms of the clock. */
  private readonly starts: Float64Array;
  /** Requests in the slot's window. */
  private readonly counts: Float64Array;
  /** The clock's time at the last call. */
  private lastTime = 0;
  /**
   * 1 for a slot whose client came back from the backstop with requests counted: its window
   * is not the peers' own but one that ends no sooner, so when it ends, the next one starts from
   * the backstop too (a reset to 1 could fall inside the peers' window and drop its requests).
   */
  private readonly uncertain: Uint8Array;

  constructor(options: ClientWindowsOptions) {
    if (options === null || typeof options !== 'object') {
      throw typeError('options', 'an object with windowMs', options);
    }
    checkOptionNames('options', options, OPTION_NAMES);
    const { continueExceeding = false, exponentialBackoff = false, capacity = 8192 } = options;
    if (typeof continueExceeding !== 'boolean') {
      throw typeError('continueExceeding', 'a boolean', continueExceeding);
    }
    if (typeof exponentialBackoff !== 'boolean') {
      throw typeError('exponentialBackoff', 'a boolean', exponentialBackoff);
    }
    const windowMs = options.windowMs;
    if (typeof windowMs !== 'number') throw typeError('windowMs', 'a number', windowMs);
    if (!(windowMs >= 1 && windowMs < Number.POSITIVE_INFINITY)) {
      throw rangeError('windowMs', 'a finite number of milliseconds >= 1', windowMs);
    }
    this.windowMs = windowMs;
    this.buckets = Math.ceil(integerIn('capacity', capacity, 1, MAX_CAPACITY) / SLOTS_PER_BUCKET);
    this.capacity = this.buckets * SLOTS_PER_BUCKET;
    this.continueExceeding = continueExceeding;
    this.exponentialBackoff = exponentialBackoff;
    const clock = checkClock(options.now);
    this.now = options.now === undefined ? () => Date.now() : clock;
    const { width, depth, epsilon, delta, engine, secret } = options;
    const sketch = { width, depth, epsilon, delta, engine, secret };
    // The backstop's windows must cover a client's window: one of 2^53 ms or more holds every
    // clock time there is, so the longest aligned window (2^53 - 1 ms) covers it as well.
    const backstopMs = Math.min(Math.ceil(windowMs), Number.MAX_SAFE_INTEGER);
    this.backstop = new Rate({ windowMs: checkWindowMs(backstopMs), ...sketch, now: this.now });
    this.hasher = this.backstop.hasher;
    this.h1s = new Int32Array(this.capacity);
    this.h2s = new Int32Array(this.capacity);
    this.used = new Uint8Array(this.capacity);
    this.starts = new Float64Array(this.capacity);
    this.counts = new Float64Array(this.capacity);
    this.uncertain = new Uint8Array(this.capacity);
    this.evicted = new Uint8Array(this.buckets);
  }

  /** @internal The clock's time at the last call (a store's resetTime is that plus the ttl). */
  get time(): number {
    return this.lastTime;
  }

  /** Bytes of process memory: the table, the two max sketches and the backstop's sketches. */
  get memoryBytes(): number {
    return (
      this.capacity * 26 +
      this.buckets +
      2 * HELD_WIDTH * HELD_DEPTH * 8 +
      this.backstop.memoryBytes
    );
  }

  /**
   * Counts a request of `key` against a limit of `max` requests per window and returns the
   * client's count and the time left. TypeError for a key that is not one.
   */
  hit(key: Key, max: number): ClientWindow {
    const time = this.begin(key);
    const { h1, h2 } = this.hasher;
    const windowMs = this.windowMs;
    let slot = this.find(h1, h2);
    let count: number;
    let start: number;
    if (slot >= 0 && time < this.starts[slot] + windowMs) {
      count = this.counts[slot] + 1;
      start = this.starts[slot];
    } else if (slot >= 0 && this.uncertain[slot] === 0) {
      count = 1; // its window ended: a new one
      start = time;
    } else {
      if (slot < 0) slot = this.take(h1, h2, time);
      ({ count, start } = this.fromBackstop(h1, h2, time, max));
      // Nothing counted for it in two windows, not held, no decrement in doubt: the peers have no
      // window running for it (one that started with a request would show), and start one too.
      this.uncertain[slot] = count === 0 && this.unsure.estimate(h1, h2) <= time ? 0 : 1;
      count += 1;
    }
    const extend = this.continueExceeding || this.exponentialBackoff;
    if (count > max && extend) {
      start = time;
      this.held.raise(h1, h2, time + windowMs);
    }
    this.starts[slot] = start;
    this.counts[slot] = count;
    this.backstop.observeHash(h1, h2, 1);
    if (count > max && this.continueExceeding) return { current: count, ttl: windowMs };
    if (count > max && this.exponentialBackoff) {
      const ttl = windowMs * 2 ** (count - max - 1);
      return { current: count, ttl: Number.isSafeInteger(ttl) ? ttl : Number.MAX_SAFE_INTEGER };
    }
    return { current: count, ttl: start + windowMs - time };
  }

  /**
   * The client's count and the time left, counting nothing: { current: 0, ttl: 0 } for a client
   * with no window running. TypeError for a key that is not one.
   */
  read(key: Key, max: number): ClientWindow {
    const time = this.begin(key);
    const { h1, h2 } = this.hasher;
    const slot = this.find(h1, h2);
    if (slot >= 0 && time < this.starts[slot] + this.windowMs) {
      return { current: this.counts[slot], ttl: this.starts[slot] + this.windowMs - time };
    }
    if (slot >= 0 && this.uncertain[slot] === 0) return { current: 0, ttl: 0 };
    const { count, start } = this.fromBackstop(h1, h2, time, max);
    if (count === 0) return { current: 0, ttl: 0 };
    return { current: count, ttl: start + this.windowMs - time };
  }

  /**
   * Takes back one request of `key` (express-rate-limit's skipFailedRequests): its count goes
   * down by 1, never below 0. A client not in the table with nothing counted starts a window of
   * 0 requests now, as MemoryStore does; one with requests counted keeps them (stricter).
   * TypeError for a key that is not one.
   */
  decrement(key: Key): void {
    const time = this.begin(key);
    const { h1, h2 } = this.hasher;
    const slot = this.find(h1, h2);
    if (slot >= 0 && this.starts[slot] === FORGOTTEN) {
      this.starts[slot] = time; // as for a client never seen: a window of 0 from now
      return;
    }
    if (slot >= 0) {
      // An ended window's count is not the next window's: nothing to take back from.
      if (time < this.starts[slot] + this.windowMs && this.counts[slot] > 0) this.counts[slot]--;
      return;
    }
    if (this.evicted[this.bucketOf(h1)] === 1) {
      // The client may have been here: MemoryStore may hold a stale window or open a new one.
      this.unsure.raise(h1, h2, time + this.windowMs);
      return;
    }
    const taken = this.take(h1, h2, time); // never here: a window of 0 from now, as MemoryStore
    this.starts[taken] = time;
    this.counts[taken] = 0;
  }

  /** `key` starts over: its next request opens a new window (express-rate-limit's resetKey). */
  forget(key: Key): void {
    const time = this.begin(key);
    const { h1, h2 } = this.hasher;
    let slot = this.find(h1, h2);
    if (slot < 0) slot = this.take(h1, h2, time);
    this.starts[slot] = FORGOTTEN; // ended, and certain: the next request counts 1
    this.counts[slot] = 0;
    this.uncertain[slot] = 0;
  }

  /**
   * `key`'s running window: what the table holds for it (its count and when its window ends),
   * or for a client not in it, what the backstop counted over the last two aligned windows and a
   * window from now; null for a client with nothing counted or whose window has ended (as
   * express-rate-limit's MemoryStore.get answers since 8.7). TypeError for a key that is not one.
   */
  state(key: Key): { current: number; endsAt: number } | null {
    const time = this.begin(key);
    const { h1, h2 } = this.hasher;
    const slot = this.find(h1, h2);
    if (slot >= 0) {
      if (this.starts[slot] === FORGOTTEN) return null; // as MemoryStore after resetKey
      const endsAt = this.starts[slot] + this.windowMs;
      if (time < endsAt) return { current: this.counts[slot], endsAt };
      // Ended. A certain window: nothing runs. An uncertain one ended sooner than the peers' may
      // have: what the backstop holds, as `hit` and `read` take it.
      if (this.uncertain[slot] === 0) return null;
    }
    const { count, start } = this.fromBackstop(h1, h2, time, Number.POSITIVE_INFINITY);
    return count === 0 ? null : { current: count, endsAt: start + this.windowMs };
  }

  /**
   * What the table no longer holds for a client: a window starting now, or when it is held over
   * the limit, at the end of its hold less a window; its count, at least what the backstop
   * counted in the current and previous aligned windows (and over `max` while held).
   */
  private fromBackstop(
    h1: number,
    h2: number,
    time: number,
    max: number,
  ): { count: number; start: number } {
    const recent = this.backstop.recentHash(h1, h2);
    const heldUntil = this.held.estimate(h1, h2);
    if (heldUntil > time) {
      return { count: Math.max(recent, max + 1), start: heldUntil - this.windowMs };
    }
    return { count: recent, start: time };
  }

  /** Reads the clock (kept for `time`) and hashes `key` into the hasher's h1 and h2. */
  private begin(key: Key): number {
    const time = readClock(this.now);
    this.lastTime = time;
    this.hasher.hash(key);
    return time;
  }

  /** The slot holding (h1, h2), or -1. */
  private find(h1: number, h2: number): number {
    const base = this.bucketOf(h1) * SLOTS_PER_BUCKET;
    for (let slot = base; slot < base + SLOTS_PER_BUCKET; slot++) {
      if (this.used[slot] === 1 && this.h1s[slot] === h1 && this.h2s[slot] === h2) return slot;
    }
    return -1;
  }

  /** The bucket of the client hashed to h1: h1 modulo the buckets. */
  private bucketOf(h1: number): number {
    return (h1 >>> 0) % this.buckets;
  }

  /** A slot of the bucket for (h1, h2): a free one, else an ended window's, else the first to end. */
  private take(h1: number, h2: number, time: number): number {
    const base = this.bucketOf(h1) * SLOTS_PER_BUCKET;
    let chosen = base;
    let ends = Number.POSITIVE_INFINITY;
    for (let slot = base; slot < base + SLOTS_PER_BUCKET; slot++) {
      if (this.used[slot] === 0) {
        chosen = slot;
        break;
      }
      const end = this.starts[slot] + this.windowMs;
      if (end < ends) {
        ends = end;
        chosen = slot;
      }
      if (end <= time) break;
    }
    if (this.used[chosen] === 1) {
      this.evicted[this.bucketOf(h1)] = 1;
      // A window still running with no request in it (a decrement opened it) leaves no trace in
      // the backstop: its client would come back as one never seen, and start a window later
      // than MemoryStore's. Remembered as a decrement in doubt is.
      const end = this.starts[chosen] + this.windowMs;
      if (this.counts[chosen] === 0 && end > time) {
        this.unsure.raise(this.h1s[chosen], this.h2s[chosen], end);
      }
    }
    this.used[chosen] = 1;
    this.uncertain[chosen] = 0;
    this.h1s[chosen] = h1;
    this.h2s[chosen] = h2;
    return chosen;
  }
}
