/**
 * One worker thread of `hotcount top --threads N`: counts its segments of the files into its
 * part of the shared heavy hitters, then posts the part's table (see top-threads.ts).
 */
import { createReadStream } from 'node:fs';
import { isMainThread, parentPort, workerData } from 'node:worker_threads';
import { HeavyHitters, type HeavyHittersHandle, type HeavyHittersTable } from '../index.js';
import type { Skipped } from './render.js';
import type { Segment } from './split.js';
import { type CountOptions, TopCounter } from './top-counter.js';

export interface TopWorkerData extends CountOptions {
  handle: HeavyHittersHandle;
  segments: Segment[];
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
  const counter = new TopCounter(data, HeavyHitters.attach(data.handle));
  const progress = data.progress
    ? { advance: (bytes: number) => post({ kind: 'progress', bytes }) }
    : undefined;
  for (const { file, start, end } of data.segments) {
    // One stream per segment: its last line (cut at a line start) does not join the next.
    const source = createReadStream(file, { start, end: end - 1, highWaterMark: 1 << 20 });
    try {
      await counter.count(file, source, progress);
    } catch (error) {
      // Already "cannot read 'file': why", as one thread would say it.
      post({ kind: 'error', message: (error as Error).message });
      return;
    }
  }
  post({ kind: 'done', table: counter.hitters.table(), skipped: counter.skipped });
}

if (!isMainThread) await run(workerData as TopWorkerData);
