/**
 * Counts kept second by second for the last `seconds` seconds, in fixed memory: a ring of
 * `seconds + 1` rows of `width` counters (the one under way and the whole ones before it). A row
 * is cleared when its second comes round again, on the first call in it, so a quiet minute costs
 * nothing and the ring never holds a count older than it says.
 */
export class SecondRing {
  readonly cells: Float64Array;
  readonly width: number;
  /** Rows in the ring: the seconds kept and the one under way. */
  readonly size: number;
  /** The current second (epoch seconds) as of the last `row()`. */
  second: number;
  private readonly now: () => number;

  constructor(seconds: number, width: number, now: () => number) {
    this.size = seconds + 1;
    this.width = width;
    this.cells = new Float64Array(this.size * width);
    this.now = now;
    this.second = Math.floor(now() / 1000);
  }

  /** The first cell of the current second's row, clearing the seconds skipped since the last call. */
  row(): number {
    const second = Math.floor(this.now() / 1000);
    if (second !== this.second) {
      const skipped = Math.min(second - this.second, this.size);
      for (let i = 1; i <= skipped; i++) {
        const at = this.rowOf(this.second + i);
        this.cells.fill(0, at, at + this.width);
      }
      this.second = second;
    }
    return this.rowOf(second);
  }

  /** The first cell of `second`'s row (meaningful for the seconds the ring keeps). */
  rowOf(second: number): number {
    const size = this.size;
    return (((second % size) + size) % size) * this.width;
  }
}
