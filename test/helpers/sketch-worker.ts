/**
 * The worker side of the shared-sketch tests: real worker_threads attached to one shared sketch.
 * `workerData` is `{ handle, task, ... }`; the worker waits at the start line (so that all of
 * them run at once and contend), runs its task and posts its result.
 *
 * Under test/, so `node --test` also loads it in the main thread, where it does nothing.
 */
import { isMainThread, parentPort, workerData } from 'node:worker_threads';
import { CountMinSketch, type SketchHandle } from '../../src/index.js';
import { seededUpdates } from './streams.js';

export interface WorkerTask {
  handle: SketchHandle;
  /** Int32Array over a SharedArrayBuffer: word 0 turns 1 when the workers may start. */
  start: Int32Array;
  task:
    | { kind: 'stream'; seed: number; count: number; keySpace: number; foldEvery?: number }
    | { kind: 'hammer'; key: string; rounds: number; sign: 1 | -1 }
    | { kind: 'hot-and-cold'; seed: number; count: number; keySpace: number }
    | { kind: 'forever'; seed: number }
    | { kind: 'until-cleared'; seed: number; flag: Int32Array; count: number };
}

export type WorkerResult =
  | { kind: 'done' }
  | { kind: 'hammered'; first: number; last: number; violations: string[] }
  | { kind: 'counts'; counts: [string, number][] }
  | { kind: 'running' };

function run({ handle, start, task }: WorkerTask): WorkerResult {
  const foldEvery = task.kind === 'stream' ? task.foldEvery : undefined;
  const sketch = CountMinSketch.attach(handle, foldEvery === undefined ? {} : { foldEvery });
  Atomics.wait(start, 0, 0);
  switch (task.kind) {
    case 'stream': {
      const next = seededUpdates(task.seed, task.keySpace);
      for (let i = 0; i < task.count; i++) sketch.increment(next(), next.by);
      sketch.fold(); // with foldEvery, what the delta still holds; else nothing to do
      return { kind: 'done' };
    }
    case 'hammer': {
      // Every estimate seen must move one way only (the key is only incremented, or only
      // decremented) and stay within the saturation limits: a wrap shows as a jump.
      const violations: string[] = [];
      let seen = sketch.estimate(task.key);
      const first = seen;
      for (let i = 0; i < task.rounds; i++) {
        const by = 1 + (i % 97) * 1000;
        const after =
          task.sign > 0 ? sketch.increment(task.key, by) : sketch.decrement(task.key, by);
        if (task.sign > 0 ? after < seen : after > seen) {
          if (violations.length < 5) violations.push(`${seen} then ${after}`);
        }
        if (after > 0x7fffffff || after < -0x7fffffff) violations.push(`out of range ${after}`);
        seen = after;
      }
      return { kind: 'hammered', first, last: seen, violations };
    }
    case 'hot-and-cold': {
      // Half of the updates go to one key that every worker hammers at once.
      const counts = new Map<string, number>();
      const next = seededUpdates(task.seed, task.keySpace);
      for (let i = 0; i < task.count; i++) {
        const cold = next();
        const key = (i & 1) === 0 ? 'hot' : `cold-${cold}`;
        sketch.increment(key, next.by);
        counts.set(key, (counts.get(key) ?? 0) + next.by);
      }
      return { kind: 'counts', counts: [...counts] };
    }
    case 'forever': {
      const next = seededUpdates(task.seed, 1000);
      for (let i = 0; ; i++) {
        sketch.increment(next(), next.by);
        if (i === 10_000) parentPort?.postMessage({ kind: 'running' } satisfies WorkerResult);
      }
    }
    case 'until-cleared': {
      // Writes while the main thread clears, then counts `count` updates it reports exactly.
      const next = seededUpdates(task.seed, 1000);
      while (Atomics.load(task.flag, 0) === 0) sketch.increment(`before-${next()}`, next.by);
      const counts = new Map<string, number>();
      for (let i = 0; i < task.count; i++) {
        const key = `after-${next()}`;
        sketch.increment(key, next.by);
        counts.set(key, (counts.get(key) ?? 0) + next.by);
      }
      return { kind: 'counts', counts: [...counts] };
    }
  }
}

if (!isMainThread && parentPort !== null) parentPort.postMessage(run(workerData as WorkerTask));
