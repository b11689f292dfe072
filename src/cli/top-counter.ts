/**
 * The counting of `hotcount top`: lines (or one field of each) of byte streams into heavy
 * hitters, in one thread. `--threads` runs one per worker over a shared sketch (top-threads.ts).
 */
import { HeavyHitters } from '../limits/heavy-hitters.js';
import { FieldPicker } from './fields.js';
import { LineSplitter } from './line-splitter.js';
import type { Summary } from './render.js';

/** What counting needs of the options (all structured-cloneable, for workers). */
export interface CountOptions {
  k: number;
  field: number | undefined;
  delimiter: Uint8Array;
  epsilon: number | undefined;
}

/** Told how many bytes were counted, chunk by chunk. */
export interface ProgressSink {
  advance(bytes: number): void;
}

/** The heavy hitters `top` counts into; `shared` for a sketch that workers attach to. */
export function createHitters(options: CountOptions, shared: boolean): HeavyHitters {
  return new HeavyHitters(
    options.epsilon === undefined
      ? { k: options.k, shared }
      : { k: options.k, epsilon: options.epsilon, shared },
  );
}

/** Counts sources one after another (a last line without newline does not join the next). */
export class TopCounter {
  readonly hitters: HeavyHitters;
  readonly splitter: LineSplitter;
  /** Seconds spent counting (not waiting for input). */
  busySeconds = 0;
  private noField = 0;

  /** Lines skipped by counters in other threads, added in by the caller. */
  skippedElsewhere = 0;

  /** `hitters`: where to count (a part of shared heavy hitters); default, new local ones. */
  constructor(options: CountOptions, hitters: HeavyHitters = createHitters(options, false)) {
    this.hitters = hitters;
    if (options.field === undefined) {
      this.splitter = new LineSplitter((bytes, start, end) =>
        hitters.addBytes(bytes, start, end, 1),
      );
    } else {
      const picker = new FieldPicker(options.field, options.delimiter);
      this.splitter = new LineSplitter((bytes, start, end) => {
        if (picker.pick(bytes, start, end) && picker.end > picker.start) {
          hitters.addBytes(bytes, picker.start, picker.end, 1);
        } else {
          this.noField++;
        }
      });
    }
  }

  async count(source: AsyncIterable<Uint8Array>, progress?: ProgressSink): Promise<void> {
    for await (const chunk of source) {
      const started = performance.now();
      this.splitter.push(chunk);
      this.busySeconds += (performance.now() - started) / 1000;
      progress?.advance(chunk.length);
    }
    this.splitter.end();
  }

  /** Empty lines, and lines without the field, skipped by this counter. */
  get skipped(): number {
    return this.splitter.skipped + this.noField;
  }

  summary(seconds: number): Summary {
    const sketch = this.hitters.sketch;
    return {
      rows: this.hitters.top(),
      total: this.hitters.total,
      skipped: this.skipped + this.skippedElsewhere,
      sketchBytes: sketch.memoryBytes,
      width: sketch.width,
      depth: sketch.depth,
      errorBound: sketch.errorBound,
      seconds,
    };
  }
}
