/**
 * The worker side of the shared-limits tests: real worker_threads attached to one shared Rate,
 * RateLimiter or Inflight, on a clock the main thread moves (an Int32 in shared memory, in ms).
 * Workers wait at the start line, run until the main thread raises the stop flag (after at
 * least `minimum` operations), and post what they counted.
 *
 * Under test/, so `node --test` also loads it in the main thread, where it does nothing.
 */
import { isMainThread, parentPort, workerData } from 'node:worker_threads';
import {
  Inflight,
  type InflightHandle,
  Rate,
  type RateHandle,
  RateLimiter,
  type RateLimiterHandle,
} from '../../src/index.js';

export interface LimitsTask {
  /** [0] start line (1: go), [1] stop flag, [2] the clock in ms, [3] workers ready, [4] progress
   * (operations done, in sixteens: the main thread moves the clock as workers make progress). */
  control: Int32Array;
  keys: number;
  minimum: number;
  task:
    | {
        kind: 'rate';
        handle: RateHandle;
        /** The true counts, as they happen: [(window - first) * keys + key], after the update. */
        truth: Int32Array;
        first: number;
      }
    | { kind: 'limiter'; handle: RateLimiterHandle }
    | {
        /**
         * Rounds in step: every worker waits (spinning) for all the others, then decides the
         * round's own key at the same moment; a pass counts under "round/key".
         */
        kind: 'race';
        handle: RateLimiterHandle | InflightHandle;
        rounds: number;
        workers: number;
        barrier: Int32Array;
      }
    | { kind: 'inflight'; handle: InflightHandle; limit: number; holders: Int32Array };
}

export interface LimitsResult {
  /** "window/key" -> events counted or cost passed; for gcra, "key" -> the pass times. */
  counts: [string, number][];
  times: [number, number[]][];
  /** Events whose clock moved two windows or more during the call (see windows.ts). */
  uncertain: number;
  operations: number;
  /** inflight: the most holders of one key seen at once. */
  mostHolders: number;
}

/** The 'race' task: see LimitsTask. Inflight guards are held until the next round. */
function race(
  task: Extract<LimitsTask['task'], { kind: 'race' }>,
  control: Int32Array,
): LimitsResult {
  const handle = task.handle;
  const limiter = 'windows' in handle ? RateLimiter.attach(handle) : null;
  const inflight = 'sketch' in handle ? Inflight.attach(handle) : null;
  const counts: [string, number][] = [];
  Atomics.add(control, 3, 1);
  Atomics.notify(control, 3);
  Atomics.wait(control, 0, 0);
  for (let round = 0; round < task.rounds; round++) {
    Atomics.add(task.barrier, 0, 1);
    while (Atomics.load(task.barrier, 0) < task.workers * (round + 1)) {
      // spin: waiting on a futex would release the workers microseconds apart
    }
    const key = `round-${round}`;
    if (limiter?.check(key).allowed) counts.push([key, 1]);
    if (inflight !== null) {
      const guard = inflight.tryAcquire(key, 1);
      if (guard !== null) counts.push([key, guard.count]);
    }
  }
  return { counts, times: [], uncertain: 0, operations: task.rounds, mostHolders: 0 };
}

function run({ control, keys, minimum, task }: LimitsTask): LimitsResult {
  if (task.kind === 'race') return race(task, control);
  let last = 0;
  const now = () => {
    last = Atomics.load(control, 2);
    return last;
  };
  const counts = new Map<string, number>();
  const times = new Map<number, number[]>();
  let uncertain = 0;
  let mostHolders = 0;
  let i = 0;
  const rate = task.kind === 'rate' ? Rate.attach(task.handle, { now }) : null;
  const limiter = task.kind === 'limiter' ? RateLimiter.attach(task.handle, { now }) : null;
  const inflight = task.kind === 'inflight' ? Inflight.attach(task.handle) : null;
  const spanMs =
    task.kind === 'limiter'
      ? task.handle.windows.windowMs
      : task.kind === 'rate'
        ? task.handle.windowMs
        : 1;
  Atomics.add(control, 3, 1);
  Atomics.notify(control, 3);
  Atomics.wait(control, 0, 0);
  for (; i < minimum || Atomics.load(control, 1) === 0; i++) {
    const key = i % keys;
    if ((i & 15) === 0) Atomics.add(control, 4, 1);
    if (inflight !== null && task.kind === 'inflight') {
      const guard = inflight.tryAcquire(key, task.limit);
      if (guard === null) continue;
      const holders = Atomics.add(task.holders, key, 1) + 1;
      if (holders > mostHolders) mostHolders = holders;
      Atomics.sub(task.holders, key, 1);
      guard.release();
      continue;
    }
    let passed = 1;
    if (rate !== null) rate.observe(key);
    else if (limiter !== null) passed = limiter.check(key).allowed ? 1 : 0;
    const window = Math.floor(last / spanMs);
    if (Math.floor(Atomics.load(control, 2) / spanMs) - window >= 2) {
      uncertain++;
      continue;
    }
    if (passed === 0) continue;
    if (task.kind === 'rate') Atomics.add(task.truth, (window - task.first) * keys + key, 1);
    const slot = `${Math.floor(last / (limiter?.windowMs ?? spanMs))}/${key}`;
    counts.set(slot, (counts.get(slot) ?? 0) + 1);
    if (limiter?.algorithm === 'gcra') {
      const list = times.get(key) ?? [];
      list.push(last);
      times.set(key, list);
    }
  }
  return { counts: [...counts], times: [...times], uncertain, operations: i, mostHolders };
}

if (!isMainThread && parentPort !== null) {
  parentPort.postMessage(run(workerData as LimitsTask));
}
