/**
 * `hotcount top --threads N FILE...`: the files split into N line-aligned runs of bytes
 * (split.ts), one worker thread each, all counting into one shared sketch, each into its own
 * exact table. Each line is read by one worker, so the tables count different events; the main
 * thread combines them (HeavyHitters.combine) and reports as the one-thread run does.
 */
import { Worker } from 'node:worker_threads';
import { InputError } from './errors.js';
import { splitFiles } from './split.js';
import { type CountOptions, createHitters, type ProgressSink, TopCounter } from './top-counter.js';
import type { TopWorkerData, TopWorkerMessage } from './top-worker.js';

const WORKER = new URL('./top-worker.js', import.meta.url);

/** Counts `files` (of `sizes` bytes) in up to `threads` workers; the counter holds the result. */
export async function countInThreads(
  options: CountOptions,
  files: string[],
  sizes: number[],
  threads: number,
  progress?: ProgressSink,
): Promise<TopCounter> {
  const hitters = createHitters(options, true);
  const counter = new TopCounter(options, hitters);
  const runs = splitFiles(files, sizes, threads);
  const workers: Worker[] = [];
  try {
    await Promise.all(
      runs.map((segments) => {
        const data: TopWorkerData = {
          k: options.k,
          field: options.field,
          delimiter: options.delimiter,
          epsilon: options.epsilon,
          handle: hitters.handle,
          segments,
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
              counter.skippedElsewhere += message.skipped;
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
      }),
    );
  } finally {
    // After a failure, the other threads' counts are of no use: stop them.
    await Promise.all(workers.map((worker) => worker.terminate()));
  }
  return counter;
}
