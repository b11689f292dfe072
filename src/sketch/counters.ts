/**
 * The storage seam: where a sketch's counters live.
 *
 * The update rules (plain, conservative, saturating) are written once, in `count-min.ts`, over
 * the four operations below. `LocalCounters` keeps them in an `Int32Array` of this thread; a
 * shared implementation (SharedArrayBuffer + Atomics) and a Redis one implement the same
 * operations, so the rules are never copied.
 *
 * Counters are 32-bit signed integers (so that every storage, shared memory and Redis included,
 * can hold them) and never wrap: a cell that reaches +/-SATURATED stays there for good (sticky),
 * so a later decrement cannot pull a saturated cell below the truth; `saturated` turns true.
 * An estimate of SATURATED therefore reads "at least SATURATED".
 */

/** The value at which a counter saturates and sticks: 2^31 - 1. */
export const SATURATED = 0x7fffffff;

export interface Counters {
  /** All cells, row after row (`depth` rows of `width`); read for merge and serialization. */
  readonly cells: Int32Array;
  /** Net sum of all updates (the sketch's N), exact up to 2^53. */
  readonly total: number;
  /** True once any cell has saturated. */
  readonly saturated: boolean;
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
  /** Adds to the total. */
  addTotal(delta: number): void;
  /** Sets every cell and the total to zero, and `saturated` to false. */
  clear(): void;
}

/** Counters in an `Int32Array` owned by one thread. */
export class LocalCounters implements Counters {
  readonly cells: Int32Array;
  total = 0;
  saturated = false;
  /**
   * An upper bound on |cell| for every cell (the sum of |delta| applied, or after a restore or
   * merge, the largest |cell|). While volume + |delta| < SATURATED no cell can reach a limit or
   * be stuck at one, so `addEach` skips the saturation checks: measured, they are a quarter of
   * an increment's time, since V8 cannot overlap them with the next key's memory accesses.
   */
  private volume = 0;

  constructor(size: number) {
    this.cells = new Int32Array(size);
  }

  load(cell: number): number {
    return this.cells[cell];
  }

  add(cell: number, delta: number): number {
    const value = this.cells[cell];
    if (value === SATURATED || value === -SATURATED) return value;
    let next = value + delta; // exact: both operands are below 2^31 in magnitude
    if (next >= SATURATED) {
      next = SATURATED;
      this.saturated = true;
    } else if (next <= -SATURATED) {
      next = -SATURATED;
      this.saturated = true;
    }
    this.cells[cell] = next;
    const magnitude = next < 0 ? -next : next;
    if (magnitude > this.volume) this.volume = magnitude;
    return next;
  }

  addEach(rowCells: Int32Array, count: number, delta: number): number {
    const magnitude = delta < 0 ? -delta : delta;
    let min = SATURATED;
    if (this.volume + magnitude < SATURATED) {
      this.volume += magnitude;
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
    if (value === SATURATED) this.saturated = true;
    if (value > this.volume) this.volume = value;
    this.cells[cell] = value;
  }

  addTotal(delta: number): void {
    this.total += delta;
  }

  clear(): void {
    this.cells.fill(0);
    this.total = 0;
    this.saturated = false;
    this.volume = 0;
  }

  /** Restores state read from a serialized sketch (cells already validated by the caller). */
  restore(total: number): void {
    this.total = total;
    let largest = 0;
    for (let i = 0; i < this.cells.length; i++) {
      const v = this.cells[i];
      const magnitude = v < 0 ? -v : v;
      if (magnitude > largest) largest = magnitude;
    }
    this.saturated = largest === SATURATED;
    this.volume = largest;
  }
}
