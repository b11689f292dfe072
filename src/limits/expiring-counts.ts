/**
 * Counts that expire, per key, in fixed memory: the semantics of rate-limiter-flexible's
 * MemoryStorage (and of Redis' INCRBY and SET with an expiry). A key's window starts with the
 * first `add` that finds none running and lasts the duration that call gives (0: never ends);
 * adds inside it add up, whatever sign they have; `set` replaces the window with a value and a
 * duration of its own; `remove` ends it. What a limiter does with the count is the caller's.
 *
 * Why not in sketch cells alone. A window's state (its value, its end) is not monotone: a window
 * that started later with less in it is more lenient than one that started earlier with more,
 * and a set or an add of negative points lowers a count, which a cell shared with other keys
 * cannot do. So, as ClientWindows does (client-windows.ts has the argument at length), the state
 * of recent keys is exact, in a table of fixed capacity (typed arrays, a slot found by the key's
 * keyed 64-bit hash, 8 slots per bucket), and every point added is also counted in sketches, the
 * backstop, which only grow:
 * - `recent`: a Rate (clock-aligned windows of `windowMs`, the limiter's duration) that counts
 *   every point added and every set's value: a window of at most windowMs that runs now started
 *   less than windowMs ago, inside the current and the previous aligned window, so their
 *   estimates, added, are at least its points.
 * - A longer window (a duration over windowMs, 0 for one that never ends, or windowMs 0) is past
 *   what `recent` covers: its points (a set's value, every add while it runs) go to `forever` as
 *   well, a Count-Min sketch that never resets, and its end raises the key's "held until" in
 *   `held`, a max sketch of times. So does a running window pushed out of the table unless points
 *   were added to it since it opened (then `recent` shows it): one of 0 points, or whose points
 *   came from the sketches, may not show there.
 * A key not in the table, in a bucket that never gave a slot away, was never here: its window
 * starts now, exactly. Otherwise it comes back from the sketches: held, with `recent + forever`
 * points until no sooner than its hold ends; else with `recent` points until windowMs from now;
 * else (nothing counted, not held) as a key never seen. A key that came back this way is
 * uncertain: its window is not the peer's own but one that ends no sooner with no fewer points,
 * so when it ends, the next one comes from the sketches too, and points taken back from it (a
 * negative add) are not taken back, since the peer may have started a new window where that
 * take-back would leave this one under it. Without evictions every answer is exactly the peer's;
 * with them, a key's count is never under the peer's and its window never ends sooner (a
 * property test holds both against the real RateLimiterMemory).
 *
 * `forever` grows for as long as the process runs, as the peer's records of never-ending windows
 * do: its error bound is epsilon times all the points ever added to long windows, and it is read
 * only for a key that is held (in a long window, or pushed out of the table while one ran).
 * Two keys whose keyed 64-bit hashes are equal would share a slot: about n^2 / 2^65 with n keys in
 * the table, and the secret keeps anyone from choosing them.
 */
import { readClock } from '../clock.js';
import { integerIn } from '../errors.js';
import type { Key } from '../hash/key-hasher.js';
import { randomSecret } from '../hash/secret.js';
import { CountMinSketch } from '../sketch/count-min.js';
import { SATURATED } from '../sketch/counters.js';
import type { SketchHasher } from '../sketch/sketch-options.js';
import { LatestTimes } from './latest-times.js';
import type { LimitSketchOptions } from './options.js';
import { checkWindowMs, Rate } from './rate.js';

/** Options of `new ExpiringCounts` (checked by the caller, which names them in its own words). */
export interface ExpiringCountsOptions extends Omit<LimitSketchOptions, 'shared'> {
  /** The longest window `recent` covers, in milliseconds (the limiter's duration); 0: none. */
  windowMs: number;
  /** Keys whose state is kept exactly (rounded up to a multiple of 8). */
  capacity: number;
  /** The clock, in milliseconds, read at each call. */
  now: () => number;
}

/** A key's window after a call: filled in place by every call, read before the next one. */
export class CountWindow {
  /** The points in the key's window (after the call's own). */
  value = 0;
  /** When the window ends, in ms of the clock; +Infinity for one that never ends. */
  endsAt = 0;
  /** Whether the call started the window (rate-limiter-flexible's isFirstInDuration). */
  first = false;
  /**
   * Whether the window is the peer's own, exactly (false for one that came back from the
   * sketches: no fewer points, ending no sooner).
   */
  certain = true;
  /** The clock's time at the call. */
  time = 0;
}

const SLOTS_PER_BUCKET = 8;
/** The most keys a table may hold: keeps a configuration typo from allocating gigabytes. */
export const MAX_EXPIRING_CAPACITY = 2 ** 24;
/** The end of a removed key's window: ended, and unlike any real end. */
const REMOVED = Number.NEGATIVE_INFINITY;
const HELD_WIDTH = 4096;
const HELD_DEPTH = 4;
/** Flags of a slot. */
const UNCERTAIN = 1;
const LONG = 2;
/** Points were added to the window since it was opened or filled: `recent` shows it. */
const COUNTED = 4;

/** Per-key counts that expire (see the top comment). */
export class ExpiringCounts {
  /** The longest window `recent` covers, in milliseconds; 0 when it covers none. */
  readonly windowMs: number;
  /** Keys whose state is kept exactly. */
  readonly capacity: number;
  /** The window of the last call. */
  readonly window = new CountWindow();
  private readonly now: () => number;
  private readonly hasher: SketchHasher;
  private readonly recent: Rate | null;
  private readonly forever: CountMinSketch;
  private readonly held = new LatestTimes(HELD_WIDTH, HELD_DEPTH);
  /** 1 for a bucket that has given a slot to another key: a key not in it may be known. */
  private readonly evicted: Uint8Array;
  private readonly buckets: number;
  private readonly h1s: Int32Array;
  private readonly h2s: Int32Array;
  /** 1 for a slot in use. */
  private readonly used: Uint8Array;
  private readonly values: Float64Array;
  /** When the slot's window ends (+Infinity: never; REMOVED: removed). */
  private readonly ends: Float64Array;
  private readonly flags: Uint8Array;

  constructor(options: ExpiringCountsOptions) {
    const { width, depth, epsilon, delta, engine, windowMs } = options;
    const secret = options.secret ?? randomSecret();
    const sketch = { width, depth, epsilon, delta, engine, secret };
    this.windowMs = windowMs;
    this.now = options.now;
    this.forever = new CountMinSketch({ ...sketch, conservative: true });
    this.hasher = this.forever.hasher;
    // The longest aligned window (2^53 - 1 ms) covers every clock time there is.
    const recentMs = Math.min(Math.ceil(windowMs), Number.MAX_SAFE_INTEGER);
    // The Rate reads the time this call read: one clock read per call, not three.
    const callTime = () => this.window.time;
    this.recent =
      windowMs > 0
        ? new Rate({ windowMs: checkWindowMs(recentMs), ...sketch, now: callTime })
        : null;
    this.buckets = Math.ceil(
      integerIn('capacity', options.capacity, 1, MAX_EXPIRING_CAPACITY) / SLOTS_PER_BUCKET,
    );
    this.capacity = this.buckets * SLOTS_PER_BUCKET;
    this.evicted = new Uint8Array(this.buckets);
    this.h1s = new Int32Array(this.capacity);
    this.h2s = new Int32Array(this.capacity);
    this.used = new Uint8Array(this.capacity);
    this.values = new Float64Array(this.capacity);
    this.ends = new Float64Array(this.capacity);
    this.flags = new Uint8Array(this.capacity);
  }

  /** Bytes of process memory: the table, the max sketch and the sketches. */
  get memoryBytes(): number {
    return (
      this.capacity * 26 +
      this.buckets +
      this.held.memoryBytes +
      this.forever.memoryBytes +
      (this.recent?.memoryBytes ?? 0)
    );
  }

  /**
   * Adds `points` (an integer, negative to take back) to `key`'s window, or starts one of
   * `durationMs` (0: never ends) with them if none runs. Returns `window`. TypeError for a key
   * that is not one.
   */
  add(key: Key, points: number, durationMs: number): CountWindow {
    const time = this.begin(key);
    const { h1, h2 } = this.hasher;
    const window = this.window;
    let slot = this.find(h1, h2);
    const certain = slot >= 0 && (this.flags[slot] & UNCERTAIN) === 0;
    if (certain && time < this.ends[slot]) {
      this.values[slot] += points; // running: the peer's own window
      window.first = false;
    } else if (certain) {
      this.open(slot, points, durationMs, time); // ended, or removed: a new one, as the peer
    } else if (slot < 0 && this.evicted[this.bucketOf(h1)] === 0) {
      slot = this.take(h1, h2, time); // never here
      this.open(slot, points, durationMs, time);
    } else {
      let known = slot >= 0 && time < this.ends[slot]; // an uncertain window, running
      if (slot < 0) slot = this.take(h1, h2, time);
      if (!known) known = this.fromSketches(slot, h1, h2, time);
      if (!known) {
        this.open(slot, points, durationMs, time); // nothing counted, not held: never seen
      } else {
        // The peer's window is this one, or ended, and a new one of durationMs starts now: this
        // one ends no sooner than either. Points taken back stay (see the top comment).
        const end = durationMs === 0 ? Number.POSITIVE_INFINITY : time + durationMs;
        if (end > this.ends[slot]) this.ends[slot] = end;
        if (this.isLong(this.ends[slot], time)) this.hold(slot, h1, h2);
        if (points > 0) this.values[slot] += points;
        window.first = false;
      }
    }
    if (points > 0) this.count(slot, h1, h2, points);
    return this.fill(slot);
  }

  /**
   * Replaces `key`'s window with one of `value` points (an integer) that lasts `durationMs`
   * (0: never ends). Returns `window`. TypeError for a key that is not one.
   */
  set(key: Key, value: number, durationMs: number): CountWindow {
    const time = this.begin(key);
    const { h1, h2 } = this.hasher;
    return this.replace(this.find(h1, h2), h1, h2, value, durationMs, time);
  }

  /**
   * Holds `key`'s window at `value` points for `durationMs` (0: for ever) from now: a limiter's
   * block. For a window the table holds for certain, `set`. For an uncertain one, the peer's may
   * hold fewer points and, by that, block now (at `value` points at most, which the caller
   * bounds), or be over already and block no more: it keeps its points, ends no sooner than the
   * block, and counts `value` in the sketches as `set` does. Returns `window`. TypeError for a
   * key that is not one.
   */
  block(key: Key, value: number, durationMs: number): CountWindow {
    const time = this.begin(key);
    const { h1, h2 } = this.hasher;
    const slot = this.find(h1, h2);
    if (slot < 0 || (this.flags[slot] & UNCERTAIN) === 0) {
      return this.replace(slot, h1, h2, value, durationMs, time);
    }
    const end = durationMs === 0 ? Number.POSITIVE_INFINITY : time + durationMs;
    if (end > this.ends[slot]) this.ends[slot] = end;
    if (value > this.values[slot]) this.values[slot] = value;
    if (this.isLong(end, time)) this.hold(slot, h1, h2);
    // The peer's block, if it blocks now, holds `value` points that came from its window before:
    // counted again, so that the sketches show them for as long as the block runs.
    if (value > 0) this.count(slot, h1, h2, value);
    this.window.first = false;
    return this.fill(slot);
  }

  /**
   * Reads `key`'s running window into `window`: false (and `window` untouched but for `time`)
   * when none runs. TypeError for a key that is not one.
   */
  read(key: Key): boolean {
    const time = this.begin(key);
    const { h1, h2 } = this.hasher;
    const window = this.window;
    const slot = this.find(h1, h2);
    window.first = false;
    if (slot >= 0 && time < this.ends[slot]) {
      this.fill(slot);
      return true;
    }
    window.certain = false;
    if (slot >= 0 && (this.flags[slot] & UNCERTAIN) === 0) return false;
    if (slot < 0 && this.evicted[this.bucketOf(h1)] === 0) return false;
    return this.estimate(h1, h2, time);
  }

  /**
   * Ends `key`'s window: its next add starts a new one. Returns whether one was running (as far
   * as the table and the sketches show). TypeError for a key that is not one.
   */
  remove(key: Key): boolean {
    const running = this.read(key);
    const { h1, h2 } = this.hasher;
    let slot = this.find(h1, h2);
    if (slot < 0) slot = this.take(h1, h2, this.window.time);
    this.ends[slot] = REMOVED;
    this.values[slot] = 0;
    this.flags[slot] = 0;
    return running;
  }

  /** `set` for the key hashed to (h1, h2), in `slot` (-1: not in the table). */
  private replace(
    found: number,
    h1: number,
    h2: number,
    value: number,
    durationMs: number,
    time: number,
  ): CountWindow {
    const slot = found >= 0 ? found : this.take(h1, h2, time);
    this.open(slot, value, durationMs, time);
    if (value > 0) this.count(slot, h1, h2, value);
    return this.fill(slot);
  }

  /** `slot`'s window into `window`. */
  private fill(slot: number): CountWindow {
    const window = this.window;
    window.value = this.values[slot];
    window.endsAt = this.ends[slot];
    window.certain = (this.flags[slot] & UNCERTAIN) === 0;
    return window;
  }

  /** A window of `points` from `time` in `slot`, certain: the peer's own. */
  private open(slot: number, points: number, durationMs: number, time: number): void {
    const end = durationMs === 0 ? Number.POSITIVE_INFINITY : time + durationMs;
    this.values[slot] = points;
    this.ends[slot] = end;
    this.flags[slot] = 0;
    this.window.first = true;
    if (this.isLong(end, time)) this.hold(slot, this.h1s[slot], this.h2s[slot]);
  }

  /**
   * Fills `slot` with what the sketches hold for the key hashed to (h1, h2), uncertain: false
   * when they hold nothing and it is not held (a key never seen, as far as they show).
   */
  private fromSketches(slot: number, h1: number, h2: number, time: number): boolean {
    if (!this.estimate(h1, h2, time)) return false;
    this.values[slot] = this.window.value;
    this.ends[slot] = this.window.endsAt;
    this.flags[slot] = UNCERTAIN;
    return true;
  }

  /**
   * What the sketches hold for the key hashed to (h1, h2), into `window`: held, its points in
   * `recent` and `forever` until no sooner than its hold ends; else its points in `recent` until
   * windowMs from now; false when those are 0.
   */
  private estimate(h1: number, h2: number, time: number): boolean {
    const window = this.window;
    const heldUntil = this.held.estimate(h1, h2);
    const recent = this.recent === null ? 0 : this.recent.recentHash(h1, h2);
    if (heldUntil > time) {
      window.value = recent + this.forever.kernel.estimate(h1, h2);
      window.endsAt = Math.max(heldUntil, time + this.windowMs);
      return true;
    }
    if (recent === 0) return false;
    window.value = recent;
    window.endsAt = time + this.windowMs;
    return true;
  }

  /** Whether a window ending at `end` from `time` is past what `recent` covers. */
  private isLong(end: number, time: number): boolean {
    return end - time > this.windowMs;
  }

  /** Marks `slot` long and raises its key's hold to the window's end. */
  private hold(slot: number, h1: number, h2: number): void {
    this.flags[slot] |= LONG;
    this.held.raise(h1, h2, this.ends[slot]);
  }

  /**
   * Counts `points` (> 0) in `recent`, and in `forever` for a long window. Into `recent` always:
   * the peer's window may be a short one that started inside this one (see `add`).
   */
  private count(slot: number, h1: number, h2: number, points: number): void {
    // A counter holds integers up to SATURATED (a limiter's block may hold more, or a fraction).
    const amount = points <= SATURATED ? Math.ceil(points) : SATURATED;
    this.recent?.observeHash(h1, h2, amount);
    this.flags[slot] |= COUNTED;
    if ((this.flags[slot] & LONG) !== 0) this.forever.kernel.increment(h1, h2, amount);
  }

  /** Reads the clock (kept in `window.time`) and hashes `key` into the hasher's h1 and h2. */
  private begin(key: Key): number {
    const time = readClock(this.now);
    this.window.time = time;
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

  /**
   * The bucket of the key hashed to h1: h1 scaled to the buckets (Lemire's multiply-shift
   * range reduction, a multiplication where a modulo is a division).
   */
  private bucketOf(h1: number): number {
    return Math.floor(((h1 >>> 0) * this.buckets) / 4294967296);
  }

  /**
   * A slot of the bucket for (h1, h2): a free one, else the window that ends first (an ended or
   * removed one first of all). Taking a running window raises its key's hold to its end; taking
   * a running or an uncertain one marks the bucket: a key not in it may have a window at the peer
   * (an uncertain window that ended may have outlived the peer's, and the peer's next one run).
   */
  private take(h1: number, h2: number, time: number): number {
    const base = this.bucketOf(h1) * SLOTS_PER_BUCKET;
    let chosen = -1;
    let ends = Number.POSITIVE_INFINITY;
    for (let slot = base; slot < base + SLOTS_PER_BUCKET; slot++) {
      if (this.used[slot] === 0) {
        chosen = slot;
        break;
      }
      if (chosen < 0 || this.ends[slot] < ends) {
        ends = this.ends[slot];
        chosen = slot;
      }
    }
    if (this.used[chosen] === 1) {
      // A short window that points were added to comes back from `recent` (no fewer, ending no
      // sooner); any other running one (long, or with none added, which `recent` may not show:
      // a window of 0 points, or one whose points came from the sketches) is held to its end.
      const shown = (this.flags[chosen] & (LONG | COUNTED)) === COUNTED;
      if (ends > time && !shown) this.held.raise(this.h1s[chosen], this.h2s[chosen], ends);
      if (ends > time || (this.flags[chosen] & UNCERTAIN) !== 0) {
        this.evicted[this.bucketOf(h1)] = 1;
      }
    }
    this.used[chosen] = 1;
    this.flags[chosen] = 0;
    this.h1s[chosen] = h1;
    this.h2s[chosen] = h2;
    return chosen;
  }
}
