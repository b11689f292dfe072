/**
 * The storage seam: where a sketch's counters live.
 *
 * The update rules (plain, conservative, saturating) are written once, in `count-min.ts`, over
 * the operations below. `LocalCounters` keeps them in an `Int32Array` of this thread;
 * `SharedCounters` (shared-counters.ts) in a SharedArrayBuffer updated with Atomics, for
 * worker_threads. (Redis does not come through this seam: its rules run as Lua scripts in the
 * server, src/redis/scripts.ts, held to the same answers by property tests.) Every operation is written so that it stays correct when other threads run the same
 * operations on the same cells at the same time: `add` and `raise` are read-modify-writes of
 * one cell, and `raiseFrom` is a compare-and-set that the conservative rule retries on failure.
 *
 * Counters are 32-bit signed integers (so that every storage, shared memory and Redis included,
 * can hold them) and never wrap: a cell that reaches +/-SATURATED stays there for good (sticky),
 * so a later decrement cannot pull a saturated cell below the truth; `saturated` turns true.
 * An estimate of SATURATED therefore reads "at least SATURATED".
 */

import { LOCAL_LAYOUT } from '../engine/layout.js';
import { SCALE_ONE } from './aging.js';

/** The value at which a counter saturates and sticks: 2^31 - 1. */
export const SATURATED = 0x7fffffff;

export interface Counters {
  /** All cells, row after row (`depth` rows of `width`); read for merge and serialization. */
  readonly cells: Int32Array;
  /** Net sum of all updates (the sketch's N), exact up to 2^53. */
  readonly total: number;
  /** True once any cell has saturated. */
  readonly saturated: boolean;
  /**
   * How many times `clear` ran, by any thread: what counts kept beside the sketch (heavy
   * hitters' exact tables) compare to know that the sketch was cleared under them.
   */
  readonly clears: number;
  /** Value of a cell. */
  load(cell: number): number;
  /** Adds `delta` (|delta| <= SATURATED) to a cell, saturating; returns the cell's new value. */
  add(cell: number, delta: number): number;
  /**
   * Adds `delta` to each of `cells[0..count)` (distinct cells, one per row), saturating, and
   * returns the least new value: one update of the plain rule. A storage may do this faster
   * than `count` calls of `add`.
   */
  addEach(cells: Int32Array, count: number, delta: number): number;
  /** Raises a cell to at least `value` (<= SATURATED); a saturated cell stays as it is. */
  raise(cell: number, value: number): void;
  /**
   * Sets a cell that holds `expected` (read by `load`) to `value` > expected, and returns true;
   * returns false, changing nothing, if the cell no longer holds `expected` (another thread
   * wrote it since). A cell at -SATURATED is stuck: true, unchanged.
   */
  raiseFrom(cell: number, expected: number, value: number): boolean;
  /** Adds to the total. */
  addTotal(delta: number): void;
  /** Sets every cell and the total to zero, and `saturated` to false. */
  clear(): void;
  /**
   * Sets every cell and the total to zero while `tags[tag]` holds `expected`, for storage that
   * is recycled from one time window to the next (src/limits/windows.ts): each cell is zeroed
   * by a compare-and-set from the value just read, after checking the tag, and the sweep stops
   * as soon as the tag changes. So a write that lands during the sweep is never erased: its
   * cell either changed between the read and the compare-and-set (which then fails), or was
   * written after the tag moved on (and the sweep has stopped). Holds where cells only grow
   * while the sweep runs (windows of counts, or of raised times). One thread's storage clears.
   */
  clearWhile(tags: Int32Array, tag: number, expected: number): void;
  /**
   * Multiplies every cell by scale / 2^20, rounded down, and the total, rounded up (see
   * aging.ts); saturated cells stay saturated. In shared storage each cell by a compare-and-set
   * from the value it read, so an update racing with it lands before it or after it, whole.
   */
  scale(scale: number): void;
  /**
   * Sets the total and derives `saturated` after `cells` were filled from a serialized sketch,
   * before any other thread can see them (cells already validated by the caller).
   */
  restore(total: number): void;
  /** Bytes of storage: the cells, and for shared storage its header. */
  readonly memoryBytes: number;
}

const SATURATED_WORD = LOCAL_LAYOUT.saturated >> 2;
const VOLUME_WORD = LOCAL_LAYOUT.volume >> 2;
const TOTAL_SLOT = LOCAL_LAYOUT.total >> 3;

/**
 * Counters owned by one thread: in an `Int32Array` of their own (the JS engine), or in the
 * WebAssembly engine's memory, which the engine updates and this object views (never grows).
 * Either way the state beside the cells (saturated, volume, total) sits in the words of
 * LOCAL_LAYOUT, so that both engines read and write the same thing.
 */
export class LocalCounters implements Counters {
  readonly cells: Int32Array;
  readonly memoryBytes: number;
  clears = 0;
  /**
   * Words of LOCAL_LAYOUT: saturated (0/1) and the volume, an upper bound on |cell| for every
   * cell (the sum of |delta| applied, or after a restore or merge, the largest |cell|). While
   * volume + |delta| < SATURATED no cell can reach a limit or be stuck at one, so `addEach`
   * skips the saturation checks: measured, they are a quarter of an increment's time, since V8
   * cannot overlap them with the next key's memory accesses.
   */
  private readonly state: Int32Array;
  /** The total, as an f64 of LOCAL_LAYOUT (exact to 2^53). */
  private readonly sums: Float64Array;

  /**
   * `size` cells; in `memory` (laid out as LOCAL_LAYOUT from byte `origin`, taking `bytes` of
   * it) if given, else in arrays of their own.
   */
  constructor(size: number, memory?: ArrayBuffer, origin = 0, bytes = memory?.byteLength ?? 0) {
    if (memory === undefined) {
      this.cells = new Int32Array(size);
      this.state = new Int32Array(VOLUME_WORD + 1);
      this.sums = new Float64Array(TOTAL_SLOT + 1);
      this.memoryBytes = this.cells.byteLength;
    } else {
      this.cells = new Int32Array(memory, origin + LOCAL_LAYOUT.cells, size);
      this.state = new Int32Array(memory, origin, VOLUME_WORD + 1);
      this.sums = new Float64Array(memory, origin, TOTAL_SLOT + 1);
      this.memoryBytes = bytes;
    }
  }

  get total(): number {
    return this.sums[TOTAL_SLOT];
  }

  get saturated(): boolean {
    return this.state[SATURATED_WORD] !== 0;
  }

  load(cell: number): number {
    return this.cells[cell];
  }

  add(cell: number, delta: number): number {
    const value = this.cells[cell];
    if (value === SATURATED || value === -SATURATED) return value;
    const next = saturatingSum(value, delta);
    this.cells[cell] = next;
    const magnitude = next < 0 ? -next : next;
    const state = this.state;
    if (magnitude === SATURATED) state[SATURATED_WORD] = 1;
    if (magnitude > state[VOLUME_WORD]) state[VOLUME_WORD] = magnitude;
    return next;
  }

  addEach(rowCells: Int32Array, count: number, delta: number): number {
    const magnitude = delta < 0 ? -delta : delta;
    let min = SATURATED;
    const state = this.state;
    const volume = state[VOLUME_WORD];
    if (volume + magnitude < SATURATED) {
      state[VOLUME_WORD] = volume + magnitude;
      const cells = this.cells;
      for (let row = 0; row < count; row++) {
        const cell = rowCells[row];
        const value = cells[cell] + delta;
        cells[cell] = value;
        if (value < min) min = value;
      }
      return min;
    }
    for (let row = 0; row < count; row++) {
      const value = this.add(rowCells[row], delta);
      if (value < min) min = value;
    }
    return min;
  }

  raise(cell: number, value: number): void {
    const current = this.cells[cell];
    if (current >= value || current === -SATURATED) return;
    this.set(cell, value);
  }

  /** One thread: the cell still holds what `load` read, so the set always succeeds. */
  raiseFrom(cell: number, expected: number, value: number): boolean {
    if (expected !== -SATURATED) this.set(cell, value);
    return true;
  }

  private set(cell: number, value: number): void {
    const state = this.state;
    if (value === SATURATED) state[SATURATED_WORD] = 1;
    if (value > state[VOLUME_WORD]) state[VOLUME_WORD] = value;
    this.cells[cell] = value;
  }

  addTotal(delta: number): void {
    this.sums[TOTAL_SLOT] += delta;
  }

  clear(): void {
    this.cells.fill(0);
    this.sums[TOTAL_SLOT] = 0;
    this.state[SATURATED_WORD] = 0;
    this.state[VOLUME_WORD] = 0;
    this.clears++;
  }

  scale(scale: number): void {
    scaleCells(this.cells, scale);
    // The volume bounds every |cell|: cells only shrank, so it still does.
    this.sums[TOTAL_SLOT] = scaleUp(this.sums[TOTAL_SLOT], scale);
  }

  /** One thread: nobody can write during the sweep. */
  clearWhile(): void {
    this.clear();
  }

  restore(total: number): void {
    this.sums[TOTAL_SLOT] = total;
    const largest = largestMagnitude(this.cells);
    this.state[SATURATED_WORD] = largest === SATURATED ? 1 : 0;
    this.state[VOLUME_WORD] = largest;
  }
}

/**
 * value + delta, clamped to +/-SATURATED: the saturating rule, for every storage. Exact: both
 * operands are below 2^31 in magnitude. (A cell already at a limit is not added to at all.)
 */
export function saturatingSum(value: number, delta: number): number {
  const sum = value + delta;
  if (sum >= SATURATED) return SATURATED;
  if (sum <= -SATURATED) return -SATURATED;
  return sum;
}

/** A cell times scale / 2^20, rounded down; exact (|cell| * scale < 2^51). */
export function scaledCell(value: number, scale: number): number {
  return value === SATURATED || value === -SATURATED
    ? value
    : Math.floor((value * scale) / SCALE_ONE);
}

/** Every cell of one thread's storage, scaled. */
function scaleCells(cells: Int32Array, scale: number): void {
  for (let i = 0; i < cells.length; i++) cells[i] = scaledCell(cells[i], scale);
}

/**
 * A total (an integer up to 2^53) times scale / 2^20, rounded up, exactly: total = q * 2^20 + r
 * with q * scale < 2^53.
 */
export function scaleUp(total: number, scale: number): number {
  const q = Math.floor(total / SCALE_ONE);
  const r = total - q * SCALE_ONE;
  return q * scale + Math.ceil((r * scale) / SCALE_ONE);
}

/** The largest |cell|: SATURATED if any cell is saturated. */
export function largestMagnitude(cells: Int32Array): number {
  let largest = 0;
  for (let i = 0; i < cells.length; i++) {
    const v = cells[i];
    const magnitude = v < 0 ? -v : v;
    if (magnitude > largest) largest = magnitude;
  }
  return largest;
}
