import assert from 'node:assert/strict';
import { once } from 'node:events';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Worker } from 'node:worker_threads';
import { Inflight, Rate, RateLimiter } from '../../src/index.js';
import type { LimitsResult, LimitsTask } from '../helpers/limits-worker.js';

const WORKER = new URL('../helpers/limits-worker.js', import.meta.url);
const secret = new Uint8Array(16).fill(21);
const START = 1_000_000;

/**
 * Runs `workers` workers on `task` while the main thread moves the clock `steps` times by
 * `stepMs`, each time after the workers did at least 64 more operations (so that windows roll
 * while they count, however the machine schedules them), and calls `atStep` before each move;
 * then stops them; resolves to their results.
 */
async function runWorkers(
  workers: number,
  task: LimitsTask['task'],
  keys: number,
  steps: number,
  stepMs: number,
  atStep: (time: number) => void = () => {},
  minimum = 2000,
): Promise<{ results: LimitsResult[]; control: Int32Array }> {
  const control = new Int32Array(new SharedArrayBuffer(20));
  control[2] = START;
  const threads = Array.from(
    { length: workers },
    () => new Worker(WORKER, { workerData: { control, keys, minimum, task } }),
  );
  // Every worker attached (which takes a while) before the clock starts to move.
  while (Atomics.load(control, 3) < workers) await sleep(1);
  Atomics.store(control, 0, 1);
  Atomics.notify(control, 0);
  const results = Promise.all(
    threads.map(async (thread) => {
      const [result] = (await once(thread, 'message')) as [LimitsResult];
      return result;
    }),
  );
  try {
    for (let step = 0; step < steps; step++) {
      const progress = Atomics.load(control, 4);
      while (Atomics.load(control, 4) < progress + 4) await sleep(0);
      atStep(Atomics.load(control, 2));
      Atomics.add(control, 2, stepMs);
    }
    Atomics.store(control, 1, 1);
    return { results: await results, control };
  } finally {
    // Also when a check fails: workers that are left running would keep the test alive.
    Atomics.store(control, 1, 1);
    await Promise.all(threads.map((thread) => thread.terminate()));
  }
}

function sum(results: LimitsResult[]): Map<string, number> {
  const total = new Map<string, number>();
  for (const result of results) {
    for (const [slot, count] of result.counts) total.set(slot, (total.get(slot) ?? 0) + count);
  }
  return total;
}

test('shared Rate, 3 workers, windows rolling under load: no event is ever lost, and the last two windows hold exactly what was counted in them', async () => {
  // Steps shorter than a window (the next window's sketch cleared ahead of time), and longer
  // (windows skipped: the current sketch cleared at the start of its window, racing writers).
  for (const [windowMs, stepMs] of [
    [7, 3],
    [50, 3],
    [2, 5],
  ]) {
    const keys = 20;
    const steps = 150;
    const first = Math.floor(START / windowMs);
    const truth = new Int32Array(new SharedArrayBuffer(4 * keys * (steps * stepMs + 2)));
    let time = START;
    // A large sketch: a sweep takes long enough for threads to be descheduled in it.
    const rate = new Rate({ windowMs, shared: true, width: 1 << 18, secret, now: () => time });
    const task = { kind: 'rate' as const, handle: rate.handle, truth, first };
    const counted = (window: number, key: number) =>
      window < first ? 0 : Atomics.load(truth, (window - first) * keys + key);
    // While the workers count: what they counted (read first) is never above the estimate.
    const check = () => {
      const window = Math.floor(time / windowMs);
      for (let key = 0; key < keys; key++) {
        const current = counted(window, key);
        const previous = counted(window - 1, key);
        const parts = rate.components(key);
        assert.ok(
          parts.current >= current,
          `window ${window}, key ${key}: ${parts.current} < ${current}`,
        );
        assert.ok(
          parts.previous >= previous,
          `window ${window - 1}, key ${key}: ${parts.previous} < ${previous}`,
        );
      }
    };
    const { results, control } = await runWorkers(3, task, keys, steps, stepMs, (clock) => {
      time = clock;
      check();
    });
    time = Atomics.load(control, 2);
    const window = Math.floor(time / windowMs);
    const uncertain = results.reduce((n, result) => n + result.uncertain, 0);
    const operations = results.reduce((n, result) => n + result.operations, 0);
    assert.ok(operations >= 64 * steps, `${operations} operations`);
    for (let key = 0; key < keys; key++) {
      const parts = rate.components(key);
      const current = counted(window, key);
      const previous = counted(window - 1, key);
      // An event whose thread stalled two windows long may show late (an overcount): allowed
      // for, and counted; none is ever lost.
      assert.ok(
        parts.current >= current && parts.current <= current + uncertain,
        `current of ${key}`,
      );
      assert.ok(
        parts.previous >= previous && parts.previous <= previous + uncertain,
        `previous of ${key}`,
      );
    }
    assert.ok(uncertain < operations / 100, `${uncertain} of ${operations} uncertain`);
  }
});

test('shared RateLimiter, 4 workers on a standing clock: each key passes exactly limit, sliding window and gcra', async () => {
  // Many keys with a small limit: the workers reach each key's last unit of quota together,
  // thousands of times, where a test-then-update would let two through.
  for (const algorithm of ['sliding-window', 'gcra'] as const) {
    for (const [limit, keys] of [
      [500, 10],
      [2, 4000],
    ]) {
      const limiter = new RateLimiter({
        limit,
        windowMs: 60_000,
        algorithm,
        shared: true,
        secret,
        width: 1 << 16,
      });
      const task = { kind: 'limiter' as const, handle: limiter.handle };
      const { results } = await runWorkers(4, task, keys, 0, 0, undefined, keys * (limit + 1));
      const passed = new Map<number, number>();
      for (const [slot, count] of sum(results)) {
        const key = Number(slot.split('/')[1]);
        passed.set(key, (passed.get(key) ?? 0) + count);
      }
      for (let key = 0; key < keys; key++) {
        assert.equal(passed.get(key), limit, `${algorithm}, key ${key} of ${keys}`);
      }
    }
  }
});

test('shared RateLimiter, 3 workers, windows rolling under load: no key passes more than limit in an aligned window', async () => {
  const limit = 40;
  const windowMs = 20;
  const limiter = new RateLimiter({ limit, windowMs, shared: true, secret, width: 64, depth: 2 });
  const { results } = await runWorkers(3, { kind: 'limiter', handle: limiter.handle }, 30, 80, 2);
  const passed = sum(results);
  assert.ok(passed.size > 30);
  for (const [slot, count] of passed) assert.ok(count <= limit, `${count} passed in ${slot}`);
});

test('shared RateLimiter, one hot key hammered by 3 workers while the clock moves a millisecond at a time: never more than limit in an aligned window', async () => {
  // Each millisecond frees about one unit of quota (the previous window's weight falls), and
  // the three workers race for it: a test-then-update would let two through, again and again.
  const limit = 50;
  const windowMs = 50;
  const limiter = new RateLimiter({ limit, windowMs, shared: true, secret });
  const task = { kind: 'limiter' as const, handle: limiter.handle };
  const { results } = await runWorkers(3, task, 1, 400, 1);
  const passed = sum(results);
  assert.ok(passed.size >= 7, `${passed.size} windows`);
  for (const [slot, count] of passed) assert.ok(count <= limit, `${count} passed in ${slot}`);
});

test('2 workers deciding the same key at the same moment, thousands of times: exactly one passes a limit of 1 (sliding window, gcra), at most one holds an inflight limit of 1', async () => {
  // As many workers as cores, released together by a spinning barrier: a test-then-update
  // would let both through whenever their calls overlap.
  const rounds = 3000;
  // Wide sketches: 3,000 keys in 4 rows of 2^20 collide with odds of about 1e-10.
  const options = { limit: 1, windowMs: 3_600_000, shared: true, secret, width: 1 << 20 };
  for (const limits of [
    new RateLimiter(options),
    new RateLimiter({ ...options, algorithm: 'gcra' }),
    new Inflight({ shared: true, secret, width: 1 << 20 }),
  ]) {
    const barrier = new Int32Array(new SharedArrayBuffer(4));
    const task = { kind: 'race' as const, handle: limits.handle, rounds, workers: 2, barrier };
    const { results } = await runWorkers(2, task, 1, 0, 0);
    const passed = sum(results);
    for (let round = 0; round < rounds; round++) {
      const count = passed.get(`round-${round}`) ?? 0;
      if (limits instanceof Inflight) assert.ok(count <= 1, `round ${round}: ${count} held`);
      else assert.equal(count, 1, `round ${round}: ${count} passed`);
    }
  }
});

test('shared gcra, 3 workers, eras rolling under load: over any interval of length L a key passes at most burst + L / T', async () => {
  const limit = 30;
  const windowMs = 60;
  const burst = 5;
  const limiter = new RateLimiter({
    limit,
    windowMs,
    algorithm: 'gcra',
    burst,
    shared: true,
    secret,
    width: 64,
    depth: 2,
  });
  const { results } = await runWorkers(3, { kind: 'limiter', handle: limiter.handle }, 12, 120, 1);
  const intervalMs = windowMs / limit;
  const merged = new Map<number, number[]>();
  for (const result of results) {
    for (const [key, times] of result.times)
      merged.set(key, [...(merged.get(key) ?? []), ...times]);
  }
  let passes = 0;
  for (const [key, times] of merged) {
    times.sort((a, b) => a - b);
    passes += times.length;
    for (let i = 0; i < times.length; i++) {
      for (let j = i; j < times.length; j++) {
        assert.ok(j - i + 1 <= burst + (times[j] - times[i]) / intervalMs, `key ${key}`);
      }
    }
  }
  assert.ok(passes > 12 * burst, `${passes} passes`);
});

test('shared Inflight, 4 workers: never more than limit holders of a key at once, and every count back to 0', async () => {
  const limit = 2;
  const inflight = new Inflight({ shared: true, secret, width: 1 << 12 });
  const holders = new Int32Array(new SharedArrayBuffer(4 * 8));
  const { results } = await runWorkers(
    4,
    { kind: 'inflight', handle: inflight.handle, limit, holders },
    8,
    0,
    0,
  );
  const most = Math.max(...results.map((result) => result.mostHolders));
  assert.ok(most >= 1 && most <= limit, `${most} holders at once`);
  for (let key = 0; key < 8; key++) assert.equal(inflight.estimate(key), 0);
  assert.equal(inflight.sketch.total, 0);
});

test('attach refuses what is not a handle of its kind, naming the field', () => {
  const rate = new Rate({ windowMs: 1000, shared: true, secret });
  const limiter = new RateLimiter({ limit: 5, windowMs: 1000, shared: true, secret });
  const inflight = new Inflight({ shared: true, secret });
  assert.throws(() => Rate.attach(null as never), { name: 'TypeError', message: /handle/ });
  assert.throws(() => Rate.attach({ ...rate.handle, state: new ArrayBuffer(64) } as never), {
    name: 'TypeError',
    message: /handle\.state/,
  });
  assert.throws(() => Rate.attach({ ...rate.handle, windowMs: 999 }), {
    name: 'RangeError',
    message: /windowMs/,
  });
  assert.throws(() => Rate.attach({ ...rate.handle, sketches: [] }), {
    name: 'TypeError',
    message: /sketches/,
  });
  assert.throws(() => RateLimiter.attach({ ...limiter.handle, algorithm: 'gcra' }), {
    name: 'RangeError',
    message: /handle/,
  });
  assert.throws(() => RateLimiter.attach(rate.handle as never), {
    name: 'TypeError',
    message: /handle/,
  });
  assert.throws(() => Inflight.attach({} as never), { name: 'TypeError', message: /handle/ });
  assert.throws(() => Rate.attach(rate.handle, { now: 1 } as never), {
    name: 'TypeError',
    message: /now/,
  });
  // A limiter attached in this thread is the same limiter.
  const again = RateLimiter.attach(limiter.handle);
  for (let i = 0; i < 5; i++) assert.ok(limiter.check('k').allowed);
  assert.equal(again.check('k').allowed, false);
  const other = Inflight.attach(inflight.handle);
  const guard = inflight.acquire('x', 3);
  assert.equal(other.estimate('x'), 3);
  guard.release();
  assert.equal(other.estimate('x'), 0);
  assert.equal(Rate.attach(rate.handle).observe('y', 2) - rate.peek('y'), 0);
});
