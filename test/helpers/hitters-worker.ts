/**
 * The worker side of the threaded heavy-hitters test: attaches a part to the shared heavy
 * hitters in `workerData.handle`, counts its slice of a seeded Zipf stream and posts its table.
 * Under test/, so `node --test` also loads it in the main thread, where it does nothing.
 */
import { isMainThread, parentPort, workerData } from 'node:worker_threads';
import { HeavyHitters, type HeavyHittersHandle } from '../../src/index.js';
import { zipf } from './zipf.js';

export interface HittersTask {
  handle: HeavyHittersHandle;
  keys: number;
  seed: number;
  events: number;
  /** This worker counts events i with i % parts === part. */
  part: number;
  parts: number;
}

function run(task: HittersTask) {
  const hitters = HeavyHitters.attach(task.handle);
  const next = zipf(task.keys, 1.0, task.seed);
  for (let i = 0; i < task.events; i++) {
    const key = next();
    if (i % task.parts === task.part) hitters.add(key);
  }
  return hitters.table();
}

if (!isMainThread && parentPort !== null) parentPort.postMessage(run(workerData as HittersTask));
