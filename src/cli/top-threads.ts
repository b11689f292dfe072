/**
 * `hotcount top --threads N FILE...`: the files split into PIECES line-aligned pieces of bytes
 * (split.ts), which N threads (this one and N - 1 workers) take one at a time from a shared
 * counter. Each piece is counted into heavy hitters of its own (a sketch and an exact table, all
 * made with one secret), whose table and sketch go to the main thread, which combines them
 * (HeavyHitters.combine, merging each piece's sketch into its own) and reports as the one-thread
 * run does.
 *
 * Why a part per piece and not per thread: which thread takes which piece changes from run to
 * run, and a thread's table, kept across its pieces, would then hold other keys; so would the
 * bounds and the keys listed (issue 34: 9 outputs in 40 runs on Node 26). A piece's counts depend
 * on its bytes only, and combining adds counts and sketches, in any order: the output is a
 * function of the input and the options. PIECES does not depend on N either (up to 8 threads), so
 * --threads 2 and --threads 8 print the same. What it costs: a key's events in a piece whose
 * table did not hold it reach only the sketch, so its lower bound can be below --threads 1's.
 *
 * Why a sketch per part and not one shared sketch: profiled on the 10M-line log, two threads
 * on one shared sketch took 1.39-1.54 s against 0.96-1.09 s with a sketch each, the rest of the
 * work being the same: the keys the tables do not track (65% of the events) write cells the
 * other core has just read or written, and each such write waits for the line to come over.
 * Merging sketches at the end keeps every bound: the merged sketch holds every event that no
 * table counted exactly, as the shared one did.
 *
 * Why pieces taken in turn and not one run per thread: the two vCPUs of the machine the
 * benchmarks ran on count at different speeds (measured pinned: 150 against 195 ns per line),
 * so with equal runs the faster one waits for the slower.
 *
 * Inputs that cannot be split (pipes, devices, standard input, /proc files: see inputs.ts) are
 * read whole by the main thread first, into a part of their own, before it takes pieces.
 */
import { Worker } from 'node:worker_threads';
import { randomSecret } from '../core.js';
import { InputError } from './failures.js';
import type { Input } from './inputs.js';
import { addSkipped } from './render.js';
import { splitFiles } from './split.js';
import {
  type CountedPart,
  type CountOptions,
  countPieces,
  createHitters,
  type ProgressSink,
  TopCounter,
} from './top-counter.js';
import type { TopWorkerData, TopWorkerMessage } from './top-worker.js';

const WORKER = new URL('./top-worker.js', import.meta.url);
/**
 * Pieces the files are split into: enough that threads running at different speeds finish
 * together, and the same for any thread count up to 8, so that the output is too.
 */
const PIECES = 16;

/** Counts `inputs` in up to `threads` threads (this one included); the counter holds the result. */
export async function countInThreads(
  options: CountOptions,
  inputs: Input[],
  threads: number,
  progress?: ProgressSink,
): Promise<TopCounter> {
  const secret = randomSecret();
  const hitters = createHitters(options, secret);
  const counter = new TopCounter(options, hitters);
  const files = inputs.filter((input) => input.splittableBytes > 0);
  const streams = inputs.filter((input) => input.splittableBytes === 0);
  const pieces = splitFiles(
    files.map((input) => input.name),
    files.map((input) => input.splittableBytes),
    Math.max(PIECES, 2 * threads),
  );
  /** One part counted (a piece, or the streams): its counts join the result. */
  const counted = (part: CountedPart) => {
    hitters.combine(part.table);
    addSkipped(counter.skippedElsewhere, part.skipped);
  };
  // The next piece to take: each worker takes one with Atomics.add until none is left.
  const next = new Int32Array(new SharedArrayBuffer(4));
  const workers: Worker[] = [];
  // The main thread counts pieces too, so threads - 1 workers: it is there already, and a
  // worker takes tens of milliseconds to start.
  const inWorkers = pieces.slice(1, threads).map(() => {
    const data: TopWorkerData = {
      k: options.k,
      field: options.field,
      delimiter: options.delimiter,
      onlyDelimited: options.onlyDelimited,
      epsilon: options.epsilon,
      secret,
      pieces,
      next,
      progress: progress !== undefined,
    };
    const worker = new Worker(WORKER, { workerData: data });
    workers.push(worker);
    return new Promise<void>((resolve, reject) => {
      let done = false;
      worker.on('message', (message: TopWorkerMessage) => {
        if (message.kind === 'progress') {
          progress?.advance(message.bytes);
        } else if (message.kind === 'piece') {
          counted(message);
        } else if (message.kind === 'done') {
          done = true;
        } else {
          reject(new InputError(message.message));
        }
      });
      worker.on('error', reject);
      worker.on('exit', (code) => {
        if (done) resolve();
        else reject(new Error(`a counting thread stopped (exit ${code}) before it was done`));
      });
    });
  });
  const inMain = (async () => {
    if (streams.length > 0) {
      const part = new TopCounter(options, createHitters(options, secret));
      await part.countInputs(streams, progress);
      counted(part.counted());
    }
    await countPieces(options, secret, pieces, next, counted, progress);
  })();
  try {
    await Promise.all([...inWorkers, inMain]);
  } finally {
    // After a failure, the other threads' counts are of no use: stop them.
    await Promise.all(workers.map((worker) => worker.terminate()));
  }
  return counter;
}
