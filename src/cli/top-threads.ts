/**
 * `hotcount top --threads N FILE...`: the files split into line-aligned pieces of bytes
 * (split.ts), PIECES_PER_THREAD per thread, which N threads (this one and N - 1 workers) take
 * one at a time from a shared counter, each counting into heavy hitters of its own (a sketch and
 * an exact table),
 * all made with one secret. Each line is read by one worker, so the tables count different
 * events; the main thread combines them (HeavyHitters.combine, which merges each worker's
 * sketch into its own) and reports as the one-thread run does.
 *
 * Why a sketch per thread and not one shared sketch: profiled on the 10M-line log, two threads
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
 * read whole by the main thread first, into its own heavy hitters, before it takes pieces.
 */
import { Worker } from 'node:worker_threads';
import { randomSecret } from '../hash/secret.js';
import { InputError } from './errors.js';
import type { Input } from './inputs.js';
import { addSkipped } from './render.js';
import { splitFiles } from './split.js';
import { type CountOptions, createHitters, type ProgressSink, TopCounter } from './top-counter.js';
import type { TopWorkerData, TopWorkerMessage } from './top-worker.js';

const WORKER = new URL('./top-worker.js', import.meta.url);
const PIECES_PER_THREAD = 8;

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
    threads * PIECES_PER_THREAD,
  );
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
        } else if (message.kind === 'done') {
          done = true;
          hitters.combine(message.table);
          addSkipped(counter.skippedElsewhere, message.skipped);
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
  const inMain = counter
    .countInputs(streams, progress)
    .then(() => counter.countPieces(pieces, next, progress));
  try {
    await Promise.all([...inWorkers, inMain]);
  } finally {
    // After a failure, the other threads' counts are of no use: stop them.
    await Promise.all(workers.map((worker) => worker.terminate()));
  }
  return counter;
}
