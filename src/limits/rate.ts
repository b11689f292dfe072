/**
 * Rate: how many events a key had in the current window of the clock, and its rate in events
 * per second over a sliding window, in fixed memory (three sketches; see windows.ts).
 *
 * The model is pingora-limits' `Rate`, with what it lacks: windows aligned to the clock
 * (window `floor(now / windowMs)`), so that processes and hosts agree on them; no division by
 * zero under 1 ms; nothing to panic about in the first window (the previous window then counts
 * 0); shared across worker_threads. `now` is injectable, so tests never sleep.
 *
 * Guarantee: every figure is a Count-Min estimate of the true figure, never below it (for the
 * current window and the previous one alike) and above it by at most epsilon times the window's
 * total with probability 1 - delta. After two windows in which a key saw nothing, its figures
 * are 0.
 */

import { checkClock } from '../clock.js';
import { checkOptionNames, integerIn } from '../errors.js';
import type { Key } from '../hash/key-hasher.js';
import type { EngineName, SketchHasher } from '../sketch/sketch-options.js';
import {
  checkCount,
  checkOptions,
  LIMIT_SKETCH_OPTION_NAMES,
  type LimitSketchOptions,
  sketchOptions,
} from './options.js';
import { Windows, type WindowsHandle } from './windows.js';

/** Options of `new Rate`: the window, the clock, the rule and the sketch's (LimitSketchOptions). */
export interface RateOptions extends LimitSketchOptions {
  /** Length of a window, in milliseconds: an integer >= 1. */
  windowMs: number;
  /** The clock, in milliseconds. Default Date.now. */
  now?: () => number;
  /** Conservative update (tighter counts). Default false. */
  conservative?: boolean;
}

/** A key's figures at one moment: what `rate` is computed from. */
export interface RateComponents {
  /** Events in the previous window. */
  previous: number;
  /** Events in the current window so far. */
  current: number;
  /** The part of the current window elapsed, in [0, 1). */
  fraction: number;
  /** Length of a window, in milliseconds. */
  windowMs: number;
}

const OPTION_NAMES = ['windowMs', 'now', 'conservative', ...LIMIT_SKETCH_OPTION_NAMES];

/** What Rate's windows are for (see Windows.create); the limiters use 2 and 3. */
const RATE_PURPOSE = [1];

/** The longest window: the window number of any clock time must be an exact integer. */
const MAX_WINDOW_MS = Number.MAX_SAFE_INTEGER;

export function checkWindowMs(value: unknown, name = 'windowMs'): number {
  return integerIn(name, value, 1, MAX_WINDOW_MS);
}

/**
 * Events per key in the current window of the clock, and their rate in events per second over
 * a sliding window, in fixed memory: never below the true figures. TypeError or RangeError
 * naming the option for bad options (windowMs an integer from 1 up).
 */
export class Rate {
  /** Length of a window, in milliseconds. */
  readonly windowMs: number;
  private readonly windows: Windows;

  constructor(options: RateOptions);
  /** @internal Over windows made elsewhere (`attach`). */
  constructor(options: RateOptions, attached: Windows);
  constructor(options: RateOptions, attached?: Windows) {
    if (attached !== undefined) {
      this.windowMs = attached.windowMs;
      this.windows = attached;
      return;
    }
    checkOptions(options);
    checkOptionNames('options', options, OPTION_NAMES);
    const windowMs = checkWindowMs(options.windowMs);
    const conservative = options.conservative ?? false;
    const sketch = { ...sketchOptions(options, false), conservative };
    this.windowMs = windowMs;
    this.windows = Windows.create(windowMs, sketch, checkClock(options.now), RATE_PURPOSE);
  }

  /** The same Rate as the one `handle` came from, over the same shared memory. */
  static attach(handle: WindowsHandle, options: { now?: () => number } = {}): Rate {
    checkOptions(options);
    checkOptionNames('options', options, ['now']);
    const windows = Windows.attach('handle', handle, checkClock(options.now), RATE_PURPOSE);
    checkWindowMs(windows.windowMs, 'handle.windowMs');
    return new Rate({ windowMs: windows.windowMs }, windows);
  }

  /** What a worker_thread needs to `attach` this Rate (shared: true only). */
  get handle(): WindowsHandle {
    return this.windows.handle;
  }

  /** Which engine the sketches run on. */
  get engine(): EngineName {
    return this.windows.current.engine;
  }

  /** Bytes of the three sketches. */
  get memoryBytes(): number {
    return this.windows.memoryBytes;
  }

  /**
   * Start of the window the last call counted or read in, in the clock's milliseconds; that
   * window ends at `windowStart + windowMs`.
   */
  get windowStart(): number {
    return this.windows.start;
  }

  /** Adds `events` (default 1) to `key`; returns its count in the current window, after. */
  observe(key: Key, events = 1): number {
    checkCount('events', events, 0);
    const windows = this.windows;
    windows.advance();
    return windows.current.increment(key, events);
  }

  /**
   * @internal The windows' hasher (one secret for the three sketches): a caller that keeps
   * state of its own beside this Rate hashes a key once with it, then counts by the hash.
   */
  get hasher(): SketchHasher {
    return this.windows.hasher;
  }

  /** @internal `observe(key, events)` for the key hashed to (h1, h2), `events` checked. */
  observeHash(h1: number, h2: number, events: number): number {
    const windows = this.windows;
    windows.advance();
    return windows.current.kernel.increment(h1, h2, events);
  }

  /** @internal The key's counts in the previous and current windows, added, by hash. */
  recentHash(h1: number, h2: number): number {
    const windows = this.windows;
    windows.advance();
    return windows.previousEstimate(h1, h2) + windows.current.kernel.estimate(h1, h2);
  }

  /** The key's count in the current window, without adding. */
  peek(key: Key): number {
    const windows = this.windows;
    windows.advance();
    return windows.current.estimate(key);
  }

  /** The key's counts in the current and previous windows, and how far the current one is. */
  components(key: Key): RateComponents {
    const windows = this.windows;
    windows.advance();
    const hasher = windows.hasher;
    hasher.hash(key);
    const previous = windows.previousEstimate(hasher.h1, hasher.h2);
    return {
      previous,
      current: windows.current.kernel.estimate(hasher.h1, hasher.h2),
      fraction: windows.fraction,
      windowMs: this.windowMs,
    };
  }

  /**
   * Events per second over a sliding window: (previous * (1 - fraction) + current) /
   * (windowMs / 1000), which assumes the previous window's events were spread evenly over it.
   */
  rate(key: Key): number {
    const windows = this.windows;
    windows.advance();
    const hasher = windows.hasher;
    hasher.hash(key);
    const before = windows.previousEstimate(hasher.h1, hasher.h2);
    const current = windows.current.kernel.estimate(hasher.h1, hasher.h2);
    return ((before * (1 - windows.fraction) + current) * 1000) / this.windowMs;
  }
}
