/**
 * The counting of `hotcount top`: lines (or one field of each) of byte streams into heavy
 * hitters, in one thread. `--threads` runs one per worker (top-threads.ts).
 */
import { createReadStream } from 'node:fs';
import type { ChunkHasher, SketchHasher } from '../core.js';
import { HeavyHitters, type HeavyHittersTable } from '../core.js';
import { readError } from './failures.js';
import { FIELD, FieldPicker, NO_FIELD } from './field-picker.js';
import { HashedLineSplitter } from './hashed-line-splitter.js';
import { CHUNK_BYTES, type Input, readInput } from './inputs.js';
import { LineSplitter } from './line-splitter.js';
import { addSkipped, type Skipped, type Summary } from './render.js';
import type { Segment } from './split.js';

/** What counting needs of the options (all structured-cloneable, for workers). */
export interface CountOptions {
  k: number;
  field: number | undefined;
  delimiter: Uint8Array;
  /** Skip lines without the delimiter (cut's -s) instead of counting them whole. */
  onlyDelimited: boolean;
  epsilon: number | undefined;
}

/** A part counted by one TopCounter, to combine into another's heavy hitters. */
export interface CountedPart {
  /** The heavy hitters' table, with their sketch. */
  table: HeavyHittersTable;
  /** Lines skipped, by reason. */
  skipped: Skipped;
}

/** Told how many bytes were counted, chunk by chunk. */
export interface ProgressSink {
  advance(bytes: number): void;
}

/**
 * The heavy hitters `top` counts into. Threads each count into heavy hitters of their own made
 * with one `secret`, whose tables (and sketches) the main thread then combines.
 */
export function createHitters(options: CountOptions, secret?: Uint8Array): HeavyHitters {
  return new HeavyHitters(
    options.epsilon === undefined
      ? { k: options.k, secret }
      : { k: options.k, epsilon: options.epsilon, secret },
  );
}

/** Counts sources one after another (a last line without newline does not join the next). */
export class TopCounter {
  readonly hitters: HeavyHitters;
  readonly splitter: LineSplitter;
  /** Seconds spent counting (not waiting for input). */
  busySeconds = 0;
  private noField = 0;
  private noDelimiter = 0;

  /** Lines skipped by counters in other threads, added in by the caller. */
  readonly skippedElsewhere: Skipped = { emptyLines: 0, noField: 0, noDelimiter: 0 };

  /**
   * Hashes each key where it lies in the chunk (copied into the engine once per chunk), or
   * the sketch's own hasher where the engine cannot run.
   */
  readonly chunks: ChunkHasher | undefined;

  /**
   * `hitters`: where to count; default, new ones. `chunks`: a chunk hasher made with the
   * hitters' secret (another counter's, so that each piece of top-threads.ts does not make an
   * engine memory of its own); default, one of their sketch's.
   */
  constructor(
    options: CountOptions,
    hitters: HeavyHitters = createHitters(options),
    chunks: ChunkHasher | undefined = hitters.sketch.chunkHasher(CHUNK_BYTES),
  ) {
    this.hitters = hitters;
    // The largest chunk the inputs are read in; a larger one (from a pipe, never) is hashed in JS.
    this.chunks = chunks;
    const hasher: Pick<SketchHasher, 'h1' | 'h2' | 'hashBytes'> =
      this.chunks ?? hitters.sketch.hasher;
    const count = (bytes: Uint8Array, start: number, end: number) => {
      hasher.hashBytes(bytes, start, end);
      hitters.addHashedBytes(bytes, start, end, hasher.h1, hasher.h2, 1);
    };
    if (options.field === undefined) {
      this.splitter =
        this.chunks === undefined
          ? new LineSplitter(count)
          : new HashedLineSplitter(this.chunks, (bytes, start, end, h1, h2) =>
              hitters.addHashedBytes(bytes, start, end, h1, h2, 1),
            );
    } else {
      const picker = new FieldPicker(options.field, options.delimiter, options.onlyDelimited);
      this.splitter = new LineSplitter((bytes, start, end) => {
        const found = picker.pick(bytes, start, end);
        if (found === FIELD && picker.end > picker.start) {
          count(bytes, picker.start, picker.end);
        } else if (found === FIELD || found === NO_FIELD) {
          this.noField++;
        } else {
          this.noDelimiter++;
        }
      });
    }
  }

  /** Counts `source`, the input called `name`; InputError naming it when it cannot be read. */
  async count(
    name: string,
    source: AsyncIterable<Uint8Array>,
    progress?: ProgressSink,
  ): Promise<void> {
    try {
      for await (const chunk of source) {
        const started = performance.now();
        this.chunks?.load(chunk);
        this.splitter.push(chunk);
        this.busySeconds += (performance.now() - started) / 1000;
        progress?.advance(chunk.length);
      }
      this.splitter.end();
    } catch (error) {
      throw readError(name, error);
    }
  }

  /** Counts the segments of one piece of the files, in order (top-threads.ts). */
  async countSegments(segments: Segment[], progress?: ProgressSink): Promise<void> {
    for (const { file, start, end } of segments) {
      // One stream per segment: its last line (cut at a line start) does not join the next.
      const source = createReadStream(file, { start, end: end - 1, highWaterMark: CHUNK_BYTES });
      await this.count(file, source, progress);
    }
  }

  /** What another thread's counter combines of this one: its table (and sketch), its skips. */
  counted(): CountedPart {
    return { table: this.hitters.table(), skipped: this.skipped };
  }

  /** Counts `inputs` one after another (inputs.ts reads them). */
  async countInputs(inputs: Input[], progress?: ProgressSink): Promise<void> {
    for (const input of inputs) await this.count(input.name, readInput(input), progress);
  }

  /** Lines skipped by this counter, by reason (a fresh object). */
  get skipped(): Skipped {
    return {
      emptyLines: this.splitter.skipped,
      noField: this.noField,
      noDelimiter: this.noDelimiter,
    };
  }

  summary(seconds: number): Summary {
    const sketch = this.hitters.sketch;
    return {
      rows: this.hitters.top(),
      total: this.hitters.total,
      skipped: addSkipped(this.skipped, this.skippedElsewhere),
      sketchBytes: sketch.memoryBytes,
      width: sketch.width,
      depth: sketch.depth,
      errorBound: sketch.errorBound,
      seconds,
    };
  }
}

/**
 * Takes pieces in turn with the other threads, through the shared counter `next`, and counts
 * each into heavy hitters of its own (made with `secret`), handing each to `counted`.
 */
export async function countPieces(
  options: CountOptions,
  secret: Uint8Array,
  pieces: Segment[][],
  next: Int32Array,
  counted: (part: CountedPart) => void,
  progress?: ProgressSink,
): Promise<void> {
  let chunks: ChunkHasher | undefined;
  for (;;) {
    const piece = Atomics.add(next, 0, 1);
    if (piece >= pieces.length) return;
    const hitters = createHitters(options, secret);
    const part = new TopCounter(
      options,
      hitters,
      chunks ?? hitters.sketch.chunkHasher(CHUNK_BYTES),
    );
    chunks = part.chunks;
    await part.countSegments(pieces[piece], progress);
    counted(part.counted());
  }
}
