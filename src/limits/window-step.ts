/**
 * A limit's step over its windows (windows.ts), as one object that a limiter makes once and
 * reuses for every check, so that the hot path allocates nothing: the caller writes the step's
 * rule into it, the step writes back what it read.
 *
 * The step, for one key: `previous` = its count in the previous window (0 when that window
 * counted nothing); lo = max(floor, previous + previousFloorOffset) and `ceiling` =
 * floor(limit - previous * previousWeight); then, in the current window, with `add` 0,
 * max(count, lo) without writing; else SketchKernel.raiseWithin(lo, add, ceiling): the count
 * raised to max(count, lo) + add unless that passes the ceiling, the target returned either way.
 * One rule for both algorithms:
 * - the sliding window: no floor, `limit` the limit, `previousWeight` the part of the current
 *   window still to come, `add` the cost;
 * - GCRA (gcra.ts), whose cells hold theoretical arrival times (TATs) in ticks of an era:
 *   `floor` the time now, `previousFloorOffset` minus an era (the previous era's TAT read in
 *   this era's ticks), `limit` now + the horizon, `previousWeight` 0, `add` the cost in ticks.
 *
 * Where the windows run on a local engine the slots are in the engine's memory (`address`): the
 * engine reads the rule and writes `previous` and `ceiling` there, in the one call that hashes
 * the key and reads both windows (tools/engine/steps.mjs, windowSteps). Elsewhere `byHash` runs
 * the rule, in the same doubles: the reference the engine is tested against.
 */
import { STEP_LAYOUT } from '../engine/layout.js';
import type { CountMinSketch } from '../sketch/count-min.js';

/** floor(limit - previous * weight), in doubles, as the engine and the Redis script compute it. */
export function weightedCeiling(limit: number, previous: number, weight: number): number {
  return Math.floor(limit - previous * weight);
}

const FLOOR = STEP_LAYOUT.floor >> 3;
const PREVIOUS_FLOOR_OFFSET = STEP_LAYOUT.previousFloorOffset >> 3;
const LIMIT = STEP_LAYOUT.limit >> 3;
const PREVIOUS_WEIGHT = STEP_LAYOUT.previousWeight >> 3;
const ADD = STEP_LAYOUT.add >> 3;
const PREVIOUS = STEP_LAYOUT.previous >> 3;
const CEILING = STEP_LAYOUT.ceiling >> 3;

export class WindowStep {
  /** The rule and the results, as doubles at STEP_LAYOUT's offsets. */
  private readonly slots: Float64Array;
  /** The slots' byte address in the engine's memory, or -1 when they are not there. */
  readonly address: number;
  /** The request's cost, in requests (the decisions report it; `add` is what cells gain). */
  cost = 0;
  /** Milliseconds of the current window gone at the step. */
  elapsedMs = 0;

  /** `slots`: a view of an engine's memory (STEP_LAYOUT.bytes long); default, memory of its own. */
  constructor(slots?: Float64Array) {
    this.slots = slots ?? new Float64Array(STEP_LAYOUT.bytes >> 3);
    this.address = slots === undefined ? -1 : slots.byteOffset;
  }

  /** The least the key's count reads before `add` (GCRA: the time now, in ticks). */
  get floor(): number {
    return this.slots[FLOOR];
  }
  set floor(value: number) {
    this.slots[FLOOR] = value;
  }

  /** Added to `previous` for a second floor (GCRA: minus an era, in ticks); -Infinity: none. */
  get previousFloorOffset(): number {
    return this.slots[PREVIOUS_FLOOR_OFFSET];
  }
  set previousFloorOffset(value: number) {
    this.slots[PREVIOUS_FLOOR_OFFSET] = value;
  }

  /** The ceiling when the previous window counted nothing (GCRA: now + the horizon, in ticks). */
  get limit(): number {
    return this.slots[LIMIT];
  }
  set limit(value: number) {
    this.slots[LIMIT] = value;
  }

  /** The share of `previous` the ceiling gives up (the part of the window to come; GCRA: 0). */
  get previousWeight(): number {
    return this.slots[PREVIOUS_WEIGHT];
  }
  set previousWeight(value: number) {
    this.slots[PREVIOUS_WEIGHT] = value;
  }

  /** What the step adds to the key's count if it stays within the ceiling: 0 only reads. */
  get add(): number {
    return this.slots[ADD];
  }
  set add(value: number) {
    this.slots[ADD] = value;
  }

  /** Result: the key's count in the previous window. */
  get previous(): number {
    return this.slots[PREVIOUS];
  }

  /** Result: the ceiling the step tested against. */
  get ceiling(): number {
    return this.slots[CEILING];
  }

  /** Sets the results where the step ran elsewhere (the Redis script returns them). */
  found(previous: number, ceiling: number): void {
    this.slots[PREVIOUS] = previous;
    this.slots[CEILING] = ceiling;
  }

  /**
   * The step on `current` for the key hashed to (h1, h2), whose count in the previous window
   * the caller read (`previous`): returns what the step found, and keeps the results here.
   */
  byHash(current: CountMinSketch, h1: number, h2: number, previous: number): number {
    const slots = this.slots;
    const lo = Math.max(slots[FLOOR], previous + slots[PREVIOUS_FLOOR_OFFSET]);
    const ceiling = weightedCeiling(slots[LIMIT], previous, slots[PREVIOUS_WEIGHT]);
    slots[PREVIOUS] = previous;
    slots[CEILING] = ceiling;
    const add = slots[ADD];
    if (add === 0) return Math.max(current.kernel.estimate(h1, h2), lo);
    return current.kernel.raiseWithin(h1, h2, lo, add, ceiling);
  }
}
