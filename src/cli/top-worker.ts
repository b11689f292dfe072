/**
 * One worker thread of `hotcount top --threads N`: takes pieces of the files in turn (with the
 * other workers) and counts them into heavy hitters of its own, then posts their table, which
 * brings their sketch (see top-threads.ts).
 */
import { isMainThread, parentPort, workerData } from 'node:worker_threads';
import type { HeavyHittersTable } from '../index.js';
import type { Skipped } from './render.js';
import type { Segment } from './split.js';
import { type CountOptions, createHitters, TopCounter } from './top-counter.js';

export interface TopWorkerData extends CountOptions {
  /** The secret of every thread's heavy hitters, so that their tables and sketches combine. */
  secret: Uint8Array;
  /** Every piece, each a list of segments; workers take them in turn. */
  pieces: Segment[][];
  /** Word 0: the next piece to take, shared by the workers. */
  next: Int32Array;
  /** Post progress messages (the main thread draws a bar). */
  progress: boolean;
}

export type TopWorkerMessage =
  | { kind: 'progress'; bytes: number }
  | { kind: 'done'; table: HeavyHittersTable; skipped: Skipped }
  | { kind: 'error'; message: string };

function post(message: TopWorkerMessage): void {
  parentPort?.postMessage(message);
}

async function run(data: TopWorkerData): Promise<void> {
  const counter = new TopCounter(data, createHitters(data, data.secret));
  const progress = data.progress
    ? { advance: (bytes: number) => post({ kind: 'progress', bytes }) }
    : undefined;
  try {
    await counter.countPieces(data.pieces, data.next, progress);
  } catch (error) {
    // Already "cannot read 'file': why", as one thread would say it.
    post({ kind: 'error', message: (error as Error).message });
    return;
  }
  post({ kind: 'done', table: counter.hitters.table(), skipped: counter.skipped });
}

if (!isMainThread) await run(workerData as TopWorkerData);
