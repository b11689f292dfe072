/**
 * Time windows aligned to the clock, over three sketches in rotation: what `Rate` and
 * `RateLimiter` count into.
 *
 * Window n is [n * windowMs, (n + 1) * windowMs) of the clock (`now`, default Date.now), so
 * processes and hosts that share a clock agree on its boundaries. Window n counts into sketch
 * n mod 3: the current window and the previous one are read, and the third sketch, which held
 * window n - 2, is cleared for window n + 1 ahead of time, while nobody reads or writes it. So
 * rolling to the next window is picking another sketch: nothing is moved, nothing is lost, no
 * event is counted in two windows. Memory is three sketches, whatever the number of keys.
 *
 * Who clears. A word per sketch (its tag) says which window the sketch holds: HOLDS(n), or
 * CLEARING(n) while it is being cleared for window n, or EMPTY (never used, all zero). The
 * first call that sees window n (in any thread) makes sure the current sketch holds n and the
 * next one holds n + 1; every call after that, until the clock reaches n + 1, only compares n
 * with the window this object saw last. Making a sketch hold n: a compare-and-set of its tag
 * from the older window to CLEARING(n) elects one thread, which sweeps the sketch
 * (Counters.clearWhile) and sets HOLDS(n). A thread that finds CLEARING(n) where it wants to
 * write helps: it sweeps too, then sets HOLDS(n) itself; it never waits for another thread, so a
 * clearing thread that is descheduled holds nobody up.
 *
 * Why a sweep that races with writers erases none of their events (the argument of
 * Counters.clearWhile): writers of window n write only after they saw HOLDS(n); a sweeper zeroes
 * a cell only by a compare-and-set from the value it read after checking that the tag still
 * says CLEARING(n), and cells only grow while a window is counted. A writer that wrote before
 * that check made the tag HOLDS(n) before it (the sweeper stops); one that wrote between the
 * check and the compare-and-set changed the cell (it fails); one that writes after it adds to
 * zero. A descheduled sweeper that wakes up late finds the tag moved on and stops.
 *
 * Reading the previous window. A thread that read the clock at the end of window n may read
 * window n - 1's sketch just as another thread, already in window n + 1, clears it for window
 * n + 2. So the read is checked afterwards, as a seqlock reader checks its sequence: if the
 * sketch's tag still says n - 1, no cell was zeroed before the read ended (a sweep starts only
 * after its tag changes), else the clock is read again and the read made in the new window.
 *
 * What a descheduled thread can do. A thread that read the clock in window n and is descheduled
 * for a whole window before it writes its event writes it into the sketch of window n, which
 * by then may be cleared for window n + 3: the event then shows in that later window (an
 * overestimate there, never a lost or negative count). It needs a thread to stall for longer
 * than `windowMs` in the middle of one call.
 *
 * A clock that steps back (NTP) is treated as standing still until it passes the time this
 * object last saw: windows only move forward.
 */
import { readClock } from '../clock.js';
import { typeError } from '../errors.js';
import type { Key } from '../hash/key-hasher.js';
import { CountMinSketch } from '../sketch/count-min.js';
import type { CountMinOptions, SketchHandle, SketchHasher } from '../sketch/sketch-options.js';
import { WindowStep } from './window-step.js';

/** What another thread needs to attach to shared windows; structured-cloneable. */
export interface WindowsHandle {
  /** Length of a window, in milliseconds. */
  windowMs: number;
  /** windowMs (an f64) and the three tags. */
  state: SharedArrayBuffer;
  /** The handles of the three window sketches, in slot order. */
  sketches: SketchHandle[];
}

/**
 * The shared state: windowMs (f64, bytes 0-7), the three tags (Int32 words 2-4), and from byte
 * 24 what the windows are for (up to 5 f64: the kind of limit and its parameters), which
 * `attach` checks, so that a handle altered on its way cannot read the cells another way.
 */
const STATE_BYTES = 64;
const PURPOSE = 3;
const PURPOSE_WORDS = 5;
/** Int32 index of the first tag (after the f64 windowMs). */
const TAGS = 2;
const EMPTY = -1;
/** Window numbers are kept modulo 2^30 in the tags (a tag is 2 * (n mod 2^30) + clearing). */
const WINDOW_MOD = 2 ** 30;
const HALF_MOD = 2 ** 29;

function holds(window: number): number {
  return 2 * (((window % WINDOW_MOD) + WINDOW_MOD) % WINDOW_MOD);
}

/** Whether `tag` is about a window before `window` (modulo 2^30: at most 2^29 windows back). */
function isBefore(tag: number, window: number): boolean {
  const distance = (holds(window) - (tag & ~1)) / 2;
  const forward = ((distance % WINDOW_MOD) + WINDOW_MOD) % WINDOW_MOD;
  return forward > 0 && forward < HALF_MOD;
}

function slotOf(window: number): number {
  return ((window % 3) + 3) % 3;
}

export class Windows {
  readonly windowMs: number;
  readonly sketches: readonly CountMinSketch[];
  /** Hashes a key once for all three sketches (they share the secret). */
  readonly hasher: SketchHasher;
  /**
   * The step of the limiter these windows count for: the rule it sets before `runStep`, what
   * the step read after (window-step.ts). In the engine's memory when the three sketches share
   * a local engine's, so that the engine runs the step in one call.
   */
  readonly step: WindowStep;
  /** The sketch of the window this object saw last. */
  current: CountMinSketch;
  /** The sketch of the window before it, or null when that window counted nothing. */
  previous: CountMinSketch | null = null;
  /** Start of that window, in the clock's milliseconds. */
  start = 0;
  /** The clock's time at the last `advance`, never before `start`. */
  time = 0;
  /** Shared windows: the key's estimate in the previous window, read by `begin`. */
  private previousCount = 0;
  private window = Number.NaN;
  /** The previous window's sketch and the tag it had when this object rolled. */
  private previousSlot = 0;
  private previousTag = EMPTY;
  private readonly state: SharedArrayBuffer | null;
  private readonly tags: Int32Array;
  private readonly now: () => number;

  private constructor(
    windowMs: number,
    sketches: CountMinSketch[],
    state: SharedArrayBuffer | null,
    now: () => number,
  ) {
    this.windowMs = windowMs;
    this.sketches = sketches;
    this.hasher = sketches[0].hasher;
    this.step = new WindowStep(state === null ? CountMinSketch.stepSlots(sketches) : undefined);
    this.current = sketches[0];
    this.state = state;
    const words = state === null ? new Int32Array(TAGS + 3) : new Int32Array(state);
    this.tags = words.subarray(TAGS, TAGS + 3);
    this.now = now;
  }

  /**
   * Three new sketches made with `options` (one secret for the three); `purpose` (at most 5
   * numbers: what reads them, and how) is kept in shared state for `attach` to check.
   */
  static create(
    windowMs: number,
    options: CountMinOptions & { secret: Uint8Array },
    now: () => number,
    purpose: readonly number[],
  ): Windows {
    // One engine memory for the three, where they run on the local engine: a step reads the
    // previous window and updates the current one in one call (runStep).
    const sketches = CountMinSketch.group(options, 3);
    let state: SharedArrayBuffer | null = null;
    if (options.shared === true) {
      state = new SharedArrayBuffer(STATE_BYTES);
      const words = new Float64Array(state);
      words[0] = windowMs;
      words.set(purpose, PURPOSE);
    }
    const windows = new Windows(windowMs, sketches, state, now);
    windows.tags.fill(EMPTY);
    return windows;
  }

  /**
   * The windows of `handle`, in this thread; `name` is what errors call the handle. RangeError
   * unless they were created for `purpose`.
   */
  static attach(
    name: string,
    handle: WindowsHandle,
    now: () => number,
    purpose: readonly number[],
  ): Windows {
    if (handle === null || typeof handle !== 'object') {
      throw typeError(name, 'the handle of shared windows', handle);
    }
    const { state, sketches } = handle;
    if (!(state instanceof SharedArrayBuffer) || state.byteLength !== STATE_BYTES) {
      throw typeError(`${name}.state`, `a SharedArrayBuffer of ${STATE_BYTES} bytes`, state);
    }
    const words = new Float64Array(state);
    if (words[0] !== handle.windowMs) {
      throw new RangeError(`${name}.windowMs does not match the windows in ${name}.state`);
    }
    for (let i = 0; i < PURPOSE_WORDS; i++) {
      if (words[PURPOSE + i] !== (purpose[i] ?? 0)) {
        throw new RangeError(`${name} is not the handle of windows made for this (other options)`);
      }
    }
    if (!Array.isArray(sketches) || sketches.length !== 3) {
      throw typeError(`${name}.sketches`, 'an array of three sketch handles', sketches);
    }
    const attached = sketches.map((sketch) => CountMinSketch.attach(sketch));
    return new Windows(handle.windowMs, attached, state, now);
  }

  get handle(): WindowsHandle {
    if (this.state === null) {
      throw new TypeError('handle is only defined with shared: true');
    }
    return {
      windowMs: this.windowMs,
      state: this.state,
      sketches: this.sketches.map((sketch) => sketch.handle),
    };
  }

  /** Bytes of the three sketches. */
  get memoryBytes(): number {
    return this.sketches.reduce((sum, sketch) => sum + sketch.memoryBytes, 0);
  }

  /** The part of the current window elapsed at the last `advance`, in [0, 1). */
  get fraction(): number {
    return (this.time - this.start) / this.windowMs;
  }

  /** Reads the clock; on a new window, rolls (see the top comment). */
  advance(): void {
    const time = readClock(this.now);
    const window = Math.floor(time / this.windowMs);
    if (window !== this.window) {
      if (window < this.window) {
        this.time = this.start; // the clock stepped back: stand still
        return;
      }
      this.roll(window);
    }
    this.time = time;
  }

  /**
   * Reads the clock (see `advance`) before a `step` for `key`. Shared windows also hash the key
   * and read its estimate in the previous window here, checked against a clear that began
   * meanwhile (`previousEstimate`), which may move the windows on: so the caller reads the
   * time and the current window after this call, not before.
   */
  begin(key: Key): void {
    this.advance();
    if (this.state === null) return;
    const hasher = this.hasher;
    hasher.hash(key);
    this.previousCount = this.previousEstimate(hasher.h1, hasher.h2);
  }

  /**
   * `step` (its rule set by the caller) on the current window for the key of the last `begin`,
   * the previous window giving the previous count: in local windows on the engine, one call,
   * hash included. Returns what the step found; `step` holds what it read.
   */
  runStep(key: Key): number {
    const step = this.step;
    const current = this.current;
    if (step.address >= 0) return current.engineStep(key, this.previous, step.address);
    const hasher = this.hasher;
    if (this.state !== null) return step.byHash(current, hasher.h1, hasher.h2, this.previousCount);
    hasher.hash(key);
    const { h1, h2 } = hasher;
    const previous = this.previous;
    return step.byHash(current, h1, h2, previous === null ? 0 : previous.kernel.estimate(h1, h2));
  }

  /**
   * The estimate of the key hashed to (h1, h2) in the previous window (0 if it counted
   * nothing), checked against a clear that began meanwhile (see the top comment).
   */
  previousEstimate(h1: number, h2: number): number {
    for (;;) {
      const previous = this.previous;
      if (previous === null) return 0;
      const value = previous.kernel.estimate(h1, h2);
      if (Atomics.load(this.tags, this.previousSlot) === this.previousTag) return value;
      const window = this.window;
      this.advance();
      // Another thread's clock is ahead of this one's: what it clears is gone for it too.
      if (this.window === window) return value;
    }
  }

  private roll(window: number): void {
    const sketches = this.sketches;
    this.hold(slotOf(window), window);
    this.hold(slotOf(window + 1), window + 1);
    const previous = slotOf(window - 1);
    const tag = Atomics.load(this.tags, previous);
    this.previous = tag >= 0 && tag >> 1 === holds(window - 1) >> 1 ? sketches[previous] : null;
    this.previousSlot = previous;
    this.previousTag = tag;
    this.current = sketches[slotOf(window)];
    this.window = window;
    this.start = window * this.windowMs;
  }

  /** Makes sketch `slot` hold `window` (cleared for it), unless it already holds it or later. */
  private hold(slot: number, window: number): void {
    const tags = this.tags;
    const wanted = holds(window);
    const clearing = wanted + 1;
    const counters = this.sketches[slot].counters;
    for (;;) {
      const tag = Atomics.load(tags, slot);
      if (tag === wanted) return;
      if (tag === EMPTY) {
        if (Atomics.compareExchange(tags, slot, EMPTY, wanted) === EMPTY) return;
      } else if (tag === clearing) {
        counters.clearWhile(tags, slot, clearing); // help: never wait for the elected thread
        Atomics.compareExchange(tags, slot, clearing, wanted);
      } else if (!isBefore(tag, window)) {
        return; // the sketch already moved past `window`: this thread's clock read is stale
      } else if (Atomics.compareExchange(tags, slot, tag, clearing) === tag) {
        counters.clearWhile(tags, slot, clearing);
        Atomics.compareExchange(tags, slot, clearing, wanted);
      }
    }
  }
}
