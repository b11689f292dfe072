/**
 * Splits a byte stream into lines without decoding it and without a string per line.
 *
 * Chunks arrive from a file or standard input; each complete line is handed to `onLine` as a
 * range of the chunk it sits in (no copy). A line cut by a chunk boundary is carried over in a
 * small buffer, so memory is one chunk plus the longest line, never the whole input. A trailing
 * CR is stripped; empty lines are skipped (and counted in `skipped`).
 */

/** Longest line we carry across chunks; a longer one is an error, not a silent truncation. */
export const MAX_LINE_BYTES = 16 * 1024 * 1024;

export type LineHandler = (bytes: Uint8Array, start: number, end: number) => void;

export class LineSplitter {
  /** Non-empty lines handed to `onLine`. */
  lines = 0;
  /** Empty lines (after stripping CR) skipped. */
  skipped = 0;
  private carry = new Uint8Array(4096);
  private carried = 0;

  constructor(private readonly onLine: LineHandler) {}

  push(chunk: Uint8Array): void {
    const n = chunk.length;
    let lineStart = 0;
    if (this.carried > 0) {
      const newline = chunk.indexOf(10);
      if (newline === -1) {
        this.keep(chunk, 0, n);
        return;
      }
      this.keep(chunk, 0, newline);
      this.emit(this.carry, 0, this.carried);
      this.carried = 0;
      lineStart = newline + 1;
    }
    lineStart = this.scan(chunk, lineStart);
    if (lineStart < n) this.keep(chunk, lineStart, n);
  }

  /**
   * Hands over every complete line of `chunk` from `from` on; returns where the incomplete
   * last line starts (or the chunk's length). HashedLineSplitter finds them in the engine.
   */
  protected scan(chunk: Uint8Array, from: number): number {
    let lineStart = from;
    // A JS loop beats indexOf here: lines are short and a native call per line costs more.
    for (let i = from; i < chunk.length; i++) {
      if (chunk[i] === 10) {
        this.emit(chunk, lineStart, i);
        lineStart = i + 1;
      }
    }
    return lineStart;
  }

  /** The input ended: a last line without a newline still counts. */
  end(): void {
    if (this.carried > 0) this.emit(this.carry, 0, this.carried);
    this.carried = 0;
  }

  protected emit(bytes: Uint8Array, start: number, end: number): void {
    if (end > start && bytes[end - 1] === 13) end--;
    if (end > start) {
      this.lines++;
      this.onLine(bytes, start, end);
    } else {
      this.skipped++;
    }
  }

  private keep(chunk: Uint8Array, start: number, end: number): void {
    const needed = this.carried + end - start;
    if (needed > MAX_LINE_BYTES) {
      throw new RangeError(
        `a line is longer than ${MAX_LINE_BYTES / 1024 / 1024} MiB, the most hotcount top reads`,
      );
    }
    if (needed > this.carry.length) {
      const grown = new Uint8Array(
        Math.min(MAX_LINE_BYTES, Math.max(needed, 2 * this.carry.length)),
      );
      grown.set(this.carry.subarray(0, this.carried));
      this.carry = grown;
    }
    this.carry.set(chunk.subarray(start, end), this.carried);
    this.carried = needed;
  }
}
