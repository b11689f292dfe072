/**
 * A max sketch of times: each cell keeps the latest time hashed to it, and a key's estimate is
 * the least over its rows, so never before the key's own latest time (a collision can only make
 * it later). What a limit keeps per key when the value it needs is "until when": a key held over
 * its limit, a block, a window's end. A time in the past means nothing, so nothing needs
 * clearing. The cells are f64 milliseconds of the limit's clock. With `lanes` > 1, each cell holds
 * that many times side by side (one per thing a limit keeps), so that reading all of a key's
 * costs the cache lines of one.
 */
import { cellOf } from '../sketch/columns.js';

export class LatestTimes {
  readonly width: number;
  readonly depth: number;
  readonly lanes: number;
  private readonly cells: Float64Array;

  constructor(width: number, depth: number, lanes = 1) {
    this.width = width;
    this.depth = depth;
    this.lanes = lanes;
    this.cells = new Float64Array(width * depth * lanes);
  }

  /** Bytes of the cells. */
  get memoryBytes(): number {
    return this.cells.byteLength;
  }

  /** Makes the key hashed to (h1, h2) read at least `until` in `lane`. */
  raise(h1: number, h2: number, until: number, lane = 0): void {
    const cells = this.cells;
    for (let row = 0; row < this.depth; row++) {
      const cell = cellOf(h1, h2, row, this.width) * this.lanes + lane;
      if (cells[cell] < until) cells[cell] = until;
    }
  }

  /** Never before the key's own latest time in `lane` (0 if it was never raised). */
  estimate(h1: number, h2: number, lane = 0): number {
    const cells = this.cells;
    let least = Number.POSITIVE_INFINITY;
    for (let row = 0; row < this.depth; row++) {
      const cell = cellOf(h1, h2, row, this.width) * this.lanes + lane;
      if (cells[cell] < least) least = cells[cell];
    }
    return least;
  }
}
