/**
 * A LineSplitter whose lines are found and hashed by the engine (ChunkHasher.hashLines):
 * `hotcount top` without `-f`. The JS loop that looks for newlines byte by byte, then a call per
 * line to hash it, cost about half of a line's time on the 10M-line log; the engine does both
 * in one pass over the chunk, sixteen bytes at a time, and hands back each line's range and
 * hash. The caller loads each chunk into the hasher before pushing it. Lines that straddle two
 * chunks, and chunks the engine cannot take, go through the LineSplitter's own path, hashed by
 * the same keyed hash.
 */
import type { ChunkHasher } from '../core.js';
import { LineSplitter } from './line-splitter.js';

/** A line found, its bytes `bytes[start..end)`, already hashed to (h1, h2). */
export type HashedLineHandler = (
  bytes: Uint8Array,
  start: number,
  end: number,
  h1: number,
  h2: number,
) => void;

export class HashedLineSplitter extends LineSplitter {
  constructor(
    private readonly hasher: ChunkHasher,
    private readonly onHashedLine: HashedLineHandler,
  ) {
    super((bytes, start, end) => {
      hasher.hashBytes(bytes, start, end);
      onHashedLine(bytes, start, end, hasher.h1, hasher.h2);
    });
  }

  protected override scan(chunk: Uint8Array, from: number): number {
    const hasher = this.hasher;
    if (!hasher.holds(chunk)) return super.scan(chunk, from);
    const records = hasher.records;
    const onHashedLine = this.onHashedLine;
    let start = from;
    for (;;) {
      const n = hasher.hashLines(start, chunk.length - start);
      for (let i = 0, at = 0; i < n; i++, at += 4) {
        onHashedLine(chunk, records[at], records[at + 1], records[at + 2], records[at + 3]);
      }
      this.lines += n;
      this.skipped += hasher.emptyLines;
      start = hasher.consumed;
      if (n < records.length >> 2) return start;
    }
  }
}
