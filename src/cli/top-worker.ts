/**
 * One worker thread of `hotcount top --threads N`: takes pieces of the files in turn (with the
 * other threads), counts each into heavy hitters of its own and posts their table, which brings
 * their sketch (see top-threads.ts).
 */
import { isMainThread, parentPort, workerData } from 'node:worker_threads';
import type { Segment } from './split.js';
import { type CountedPart, type CountOptions, countPieces } from './top-counter.js';

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
  | ({ kind: 'piece' } & CountedPart)
  | { kind: 'done' }
  | { kind: 'error'; message: string };

function post(message: TopWorkerMessage): void {
  parentPort?.postMessage(message);
}

async function run(data: TopWorkerData): Promise<void> {
  const progress = data.progress
    ? { advance: (bytes: number) => post({ kind: 'progress', bytes }) }
    : undefined;
  try {
    await countPieces(
      data,
      data.secret,
      data.pieces,
      data.next,
      (part) => post({ kind: 'piece', ...part }),
      progress,
    );
  } catch (error) {
    // Already "cannot read 'file': why", as one thread would say it.
    post({ kind: 'error', message: (error as Error).message });
    return;
  }
  post({ kind: 'done' });
}

if (!isMainThread) await run(workerData as TopWorkerData);
