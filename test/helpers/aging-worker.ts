/**
 * The worker side of the shared aging tests: increments a shared, aging sketch (`count` times,
 * or, with count 0, until control[0] turns 1, on the clock control[1] in ms) and posts how
 * many halvings this thread applied and how many events it counted.
 *
 * Under test/, so `node --test` also loads it in the main thread, where it does nothing.
 */
import { isMainThread, parentPort, workerData } from 'node:worker_threads';
import { CountMinSketch, type SketchHandle } from '../../src/index.js';

export interface AgingWorkerTask {
  handle: SketchHandle;
  /** [0] stop flag, [1] the clock in ms, [2] the main thread's decay: 0 before, 1 during, 2 after. */
  control: Int32Array;
  seed: number;
  count: number;
  /** Increment this one key until stopped, telling apart the increments made before, during and after the decay. */
  racing?: string;
}

function race(handle: SketchHandle, control: Int32Array, key: string) {
  const sketch = CountMinSketch.attach(handle);
  const made = [0, 0, 0]; // before, during, after the decay
  while (Atomics.load(control, 0) === 0) {
    const first = Atomics.load(control, 2);
    sketch.increment(key);
    const last = Atomics.load(control, 2);
    made[first === last ? first : 1]++;
  }
  return { made };
}

function run({ handle, control, seed, count, racing }: AgingWorkerTask) {
  if (racing !== undefined) return race(handle, control, racing);
  const sketch = CountMinSketch.attach(
    handle,
    handle.aging?.halfLifeMs === undefined ? {} : { now: () => Atomics.load(control, 1) },
  );
  let counted = 0;
  for (let i = 0; count === 0 ? Atomics.load(control, 0) === 0 : i < count; i++) {
    sketch.increment(`key-${(seed * 7919 + i) % 1000}`);
    counted++;
  }
  sketch.estimate('key-0'); // the last clock reading applies what is due
  const applied = (sketch as unknown as { aging: { applied: number } }).aging.applied;
  return { applied, counted };
}

if (!isMainThread && parentPort !== null) {
  parentPort.postMessage(run(workerData as AgingWorkerTask));
}
