/**
 * Quantiles of the last minute (or any window) in fixed memory: a ring of QuantileSketches, one
 * per step of the window, the oldest cleared as the clock moves past it.
 *
 * With `slots` steps of windowMs / slots each, the ring holds slots + 1 sketches: the step under
 * way and the `slots` whole steps before it. A snapshot merges them, so it covers at least the
 * last windowMs and at most windowMs + one step (60 to 65 s for the defaults); each of its
 * quantiles keeps QuantileSketch's guarantee over exactly the values it covers, since merging is
 * exact. Memory is (slots + 1) sketches whatever the number of values: 100 KiB for 1% from
 * 0.01 to 3.6e6 (milliseconds: 10 us to an hour) over a minute in 5 s steps.
 *
 * A step is cleared on the first call in the step that reuses its sketch, so a quiet minute
 * costs nothing. A clock that steps back counts into the step under way.
 */
import { checkClock, readClock } from '../clock.js';
import { checkOptionNames, integerIn, typeError } from '../errors.js';
import { QuantileSketch, type QuantileSketchOptions } from './quantile-sketch.js';

/** Options of `new SlidingQuantiles`: the window, its steps, the clock, and each sketch's. */
export interface SlidingQuantilesOptions extends QuantileSketchOptions {
  /** The window, milliseconds: an integer from 1 to 2^31 - 1. Default 60,000. */
  windowMs?: number;
  /** Steps the window slides by, each windowMs / slots long: 1 to 3,600. Default 12. */
  slots?: number;
  /** The clock, in milliseconds. Default Date.now. */
  now?: () => number;
}

const OPTION_NAMES = ['relativeAccuracy', 'minValue', 'maxValue', 'windowMs', 'slots', 'now'];

/**
 * Quantiles of the values added over a sliding window (see the top comment for what it covers),
 * each within QuantileSketch's relative accuracy. TypeError or RangeError naming the option for
 * bad options.
 */
export class SlidingQuantiles {
  /** The window, milliseconds. */
  readonly windowMs: number;
  /** Steps per window. */
  readonly slots: number;
  private readonly stepMs: number;
  private readonly sketchOptions: QuantileSketchOptions;
  private readonly ring: QuantileSketch[];
  private readonly now: () => number;
  /** The step (clock time / stepMs, rounded down) of the last call. */
  private step: number;

  constructor(options: SlidingQuantilesOptions = {}) {
    if (options === null || typeof options !== 'object') {
      throw typeError('options', 'an object', options);
    }
    checkOptionNames('options', options, OPTION_NAMES);
    const { windowMs = 60_000, slots = 12, relativeAccuracy, minValue, maxValue } = options;
    this.windowMs = integerIn('windowMs', windowMs, 1, 2 ** 31 - 1);
    this.slots = integerIn('slots', slots, 1, 3600);
    this.stepMs = this.windowMs / this.slots;
    this.now = checkClock(options.now);
    this.sketchOptions = { relativeAccuracy, minValue, maxValue };
    this.ring = [];
    for (let i = 0; i <= this.slots; i++) this.ring.push(new QuantileSketch(this.sketchOptions));
    this.step = Math.floor(readClock(this.now) / this.stepMs);
  }

  /** Bytes of the ring's counts. */
  get memoryBytes(): number {
    return this.ring.length * this.ring[0].memoryBytes;
  }

  /** Adds `value` (a number >= 0) at the clock's time; errors as QuantileSketch's `add`. */
  add(value: number): void {
    this.ring[this.advance()].add(value);
  }

  /**
   * A new QuantileSketch of the values of the window as of the clock's time: read its
   * `quantile(q)`, `max` and `count`. It is a copy; adding to it changes nothing here.
   */
  snapshot(): QuantileSketch {
    this.advance();
    const merged = new QuantileSketch(this.sketchOptions);
    for (const sketch of this.ring) merged.merge(sketch);
    return merged;
  }

  /** Forgets every value. */
  clear(): void {
    for (const sketch of this.ring) sketch.clear();
  }

  /** The ring's slot of the step under way, after clearing the steps that have gone by. */
  private advance(): number {
    const step = Math.floor(readClock(this.now) / this.stepMs);
    const size = this.ring.length;
    if (step > this.step) {
      const gone = Math.min(step - this.step, size);
      for (let i = 1; i <= gone; i++) this.ring[slotOf(this.step + i, size)].clear();
      this.step = step;
    }
    return slotOf(this.step, size);
  }
}

function slotOf(step: number, size: number): number {
  return ((step % size) + size) % size;
}
