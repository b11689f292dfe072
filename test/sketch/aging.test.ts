import assert from 'node:assert/strict';
import { once } from 'node:events';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Worker } from 'node:worker_threads';
import fc from 'fast-check';
import { CountMinSketch, HeavyHitters, SATURATED } from '../../src/index.js';
import type { AgingWorkerTask } from '../helpers/aging-worker.js';

const secret = new Uint8Array(16).fill(13);
const SCALE_ONE = 2 ** 20;

/** What decay does to an exact count: factor to 20 binary places, rounded down, floor. */
function decayed(count: number, factor: number): number {
  return Math.floor((count * Math.floor(factor * SCALE_ONE)) / SCALE_ONE);
}

const script = fc.array(
  fc.oneof(
    fc.record({
      op: fc.constant('inc' as const),
      key: fc.nat(30),
      by: fc.integer({ min: 0, max: 50 }),
    }),
    fc.record({
      op: fc.constant('decay' as const),
      factor: fc.oneof(fc.constant(0.5), fc.double({ min: 0, max: 1, noNaN: true })),
    }),
  ),
  { maxLength: 200 },
);

for (const engine of ['wasm', 'js'] as const) {
  test(`decay never leaves a key below its count decayed the same way (${engine}, plain and conservative, local and shared)`, () => {
    fc.assert(
      fc.property(script, fc.boolean(), fc.boolean(), (steps, conservative, shared) => {
        const sketch = new CountMinSketch({
          width: 8,
          depth: 2,
          secret,
          engine,
          conservative,
          shared,
        });
        const truth = new Map<number, number>();
        let total = 0;
        for (const step of steps) {
          if (step.op === 'inc') {
            sketch.increment(step.key, step.by);
            truth.set(step.key, (truth.get(step.key) ?? 0) + step.by);
            total += step.by;
          } else {
            sketch.decay(step.factor);
            for (const [key, count] of truth) truth.set(key, decayed(count, step.factor));
            total = Math.ceil((total * Math.floor(step.factor * SCALE_ONE)) / SCALE_ONE);
          }
          for (const [key, count] of truth) assert.ok(sketch.estimate(key) >= count, `key ${key}`);
          assert.equal(sketch.total, total);
        }
      }),
      { numRuns: 150 },
    );
  });
}

test('with room for every key, decay(0.5) halves each count exactly, rounding down', () => {
  const sketch = new CountMinSketch({ width: 1 << 16, secret });
  for (let key = 0; key < 100; key++) sketch.increment(key, 2 * key + 1);
  sketch.decay();
  for (let key = 0; key < 100; key++) assert.equal(sketch.estimate(key), key);
  sketch.decay(0);
  assert.equal(sketch.estimate(99), 0);
  assert.equal(sketch.total, 0);
});

test('a saturated cell stays saturated through decay', () => {
  const sketch = new CountMinSketch({ width: 4, depth: 1, secret });
  sketch.increment('big', SATURATED);
  sketch.decay(0.5);
  assert.equal(sketch.estimate('big'), SATURATED);
  assert.equal(sketch.saturated, true);
});

test('halfLife: { events: N } halves once every N events, the N-th counted after the halving', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 50 }),
      fc.array(fc.tuple(fc.nat(5), fc.integer({ min: 0, max: 20 })), { maxLength: 200 }),
      (events, steps) => {
        const sketch = new CountMinSketch({ width: 1 << 12, secret, halfLife: { events } });
        const truth = new Map<number, number>();
        let since = 0;
        for (const [key, by] of steps) {
          since += by;
          for (let due = Math.floor(since / events); due > 0; due--) {
            for (const [k, count] of truth) truth.set(k, Math.floor(count / 2));
          }
          since %= events;
          sketch.increment(key, by);
          truth.set(key, (truth.get(key) ?? 0) + by);
          for (const [k, count] of truth) assert.equal(sketch.estimate(k), count);
        }
      },
    ),
  );
});

test('halfLifeMs halves by the clock: two half-lives missed are two halvings, and reads see them', () => {
  const clock = { time: 1_000 };
  const sketch = new CountMinSketch({ secret, halfLifeMs: 100, now: () => clock.time });
  sketch.increment('k', 1000);
  clock.time = 1_099;
  assert.equal(sketch.estimate('k'), 1000);
  clock.time = 1_100;
  assert.equal(sketch.estimate('k'), 500);
  clock.time = 1_350;
  assert.equal(sketch.estimate('k'), 125);
  assert.equal(sketch.increment('k', 10), 135);
});

test('heavy hitters age with their table: every bound holds for counts decayed part by part', () => {
  fc.assert(
    fc.property(
      fc.array(fc.oneof(fc.nat(40), fc.constant(-1)), { maxLength: 400 }),
      fc.integer({ min: 1, max: 8 }),
      (steps, k) => {
        const hh = new HeavyHitters({ k, capacity: k, width: 8, depth: 2, secret });
        // The model: a key's events counted since the last decay, and its decayed past.
        const truth = new Map<number, number>();
        for (const step of steps) {
          if (step === -1) {
            hh.decay(0.5);
            for (const [key, count] of truth) truth.set(key, Math.floor(count / 2));
          } else {
            hh.add(step);
            truth.set(step, (truth.get(step) ?? 0) + 1);
          }
          for (const row of hh.top()) {
            const count = truth.get(row.key as number) ?? 0;
            // The table and the sketch each round their part down, so a bound is on the parts
            // decayed apart: below the whole count decayed by at most 1 per halving, which
            // adds up to less than 2 (1 + 1/2 + 1/4 + ...).
            assert.ok(row.lowerBound <= count, `lower ${row.lowerBound} > ${count}`);
            assert.ok(row.upperBound >= count - 2, `upper ${row.upperBound} < ${count} - 2`);
            assert.ok(row.upperBound >= row.lowerBound);
          }
        }
      },
    ),
    { numRuns: 150 },
  );
});

test('heavy hitters with halfLife halve their exact counts too', () => {
  const hh = new HeavyHitters({ k: 2, secret, halfLife: { events: 100 } });
  for (let i = 0; i < 99; i++) hh.add(i % 3);
  assert.deepEqual(
    hh.top().map((row) => row.count),
    [33, 33],
  );
  hh.add(0); // the 100th event: halving first, then counted
  assert.deepEqual(
    hh.top().map((row) => row.count),
    [17, 16],
  );
  assert.equal(hh.top()[0].key, 0);
  assert.throws(() => new HeavyHitters({ k: 2, shared: true }).decay(0.5), {
    name: 'RangeError',
    message: /shared/,
  });
});

test('bad aging options get a TypeError or RangeError naming them', () => {
  const sketch = new CountMinSketch({ secret });
  for (const factor of [-0.1, 1.5, Number.NaN]) {
    assert.throws(() => sketch.decay(factor), { name: 'RangeError', message: /factor/ });
  }
  assert.throws(() => sketch.decay('0.5' as never), { name: 'TypeError', message: /factor/ });
  for (const events of [0, 1.5, -2, 2 ** 31]) {
    assert.throws(() => new CountMinSketch({ halfLife: { events } }), {
      name: 'RangeError',
      message: /halfLife\.events/,
    });
  }
  assert.throws(() => new CountMinSketch({ halfLife: 10 as never }), {
    name: 'TypeError',
    message: /halfLife/,
  });
  assert.throws(() => new CountMinSketch({ halfLife: { event: 10 } as never }), {
    name: 'TypeError',
    message: /event is not an option/,
  });
  assert.throws(() => new CountMinSketch({ halfLifeMs: 0 }), {
    name: 'RangeError',
    message: /halfLifeMs/,
  });
  assert.throws(() => new CountMinSketch({ halfLifeMs: 10, halfLife: { events: 5 } }), {
    name: 'RangeError',
    message: /only one/,
  });
  assert.throws(() => new CountMinSketch({ now: () => 0 }), { name: 'RangeError', message: /now/ });
  assert.throws(() => new CountMinSketch({ halfLifeMs: 10, now: 3 as never }), {
    name: 'TypeError',
    message: /now/,
  });
});

async function runWorkers(tasks: AgingWorkerTask[], whileRunning: () => Promise<void>) {
  const worker = new URL('../helpers/aging-worker.js', import.meta.url);
  const threads = tasks.map((task) => new Worker(worker, { workerData: task }));
  const results = Promise.all(
    threads.map(async (thread) => {
      const [result] = (await once(thread, 'message')) as [{ applied: number; counted: number }];
      await thread.terminate();
      return result;
    }),
  );
  await whileRunning();
  return results;
}

test('shared halfLife: { events }: across 3 workers, one halving per N events summed, each applied by exactly one thread', async () => {
  const events = 5000;
  const sketch = new CountMinSketch({ secret, shared: true, halfLife: { events } });
  const control = new Int32Array(new SharedArrayBuffer(8));
  const tasks = [1, 2, 3].map((seed) => ({ handle: sketch.handle, control, seed, count: 100_000 }));
  const results = await runWorkers(tasks, async () => {});
  const applied = results.reduce((n, result) => n + result.applied, 0);
  const counted = results.reduce((n, result) => n + result.counted, 0);
  // Each worker holds back at most its last chunk (N / 64 events) from the shared sum.
  const chunk = Math.floor(events / 64);
  assert.ok(applied <= Math.floor(counted / events), `${applied} halvings for ${counted} events`);
  assert.ok(applied >= Math.floor((counted - 3 * chunk) / events), `${applied} halvings`);
});

test('shared halfLifeMs: workers on a moving clock apply exactly one halving per half-life between them', async () => {
  const sketch = new CountMinSketch({ secret, shared: true, halfLifeMs: 10, now: () => 1000 });
  const control = new Int32Array(new SharedArrayBuffer(8));
  control[1] = 1000; // the clock, ms
  const tasks = [1, 2, 3].map((seed) => ({ handle: sketch.handle, control, seed, count: 0 }));
  const results = await runWorkers(tasks, async () => {
    for (let step = 0; step < 50; step++) {
      await sleep(1);
      Atomics.add(control, 1, 3);
    }
    await sleep(5);
    Atomics.store(control, 0, 1); // stop
  });
  const applied = results.reduce((n, result) => n + result.applied, 0);
  // The clock went from 1000 to 1150: 15 half-lives since the sketch was made.
  assert.equal(applied, 15);
});

test('shared heavy hitters with halfLifeMs: every part scales its table with the shared sketch, and combined bounds hold', () => {
  fc.assert(
    fc.property(
      fc.array(fc.tuple(fc.boolean(), fc.nat(12), fc.integer({ min: 0, max: 30 })), {
        maxLength: 300,
      }),
      (steps) => {
        const clock = { time: 0 };
        const now = () => clock.time;
        const main = new HeavyHitters({
          k: 4,
          capacity: 4,
          width: 16,
          depth: 2,
          secret,
          shared: true,
          halfLifeMs: 100,
          now,
        });
        const other = HeavyHitters.attach(main.handle, { now });
        const truth = new Map<number, number>();
        let halvings = 0;
        for (const [inOther, key, step] of steps) {
          clock.time += step;
          for (; halvings < Math.floor(clock.time / 100); halvings++) {
            for (const [k, count] of truth) truth.set(k, Math.floor(count / 2));
          }
          (inOther ? other : main).add(key);
          truth.set(key, (truth.get(key) ?? 0) + 1);
        }
        const table = other.table();
        clock.time += 250; // two more halvings after the table was taken
        for (let i = 0; i < 2; i++) {
          for (const [k, count] of truth) truth.set(k, Math.floor(count / 2));
        }
        main.top(); // applies them before the combine: the table is two halvings behind
        main.combine(table);
        for (const row of main.top(20)) {
          const count = truth.get(row.key as number) ?? 0;
          // Each part and the sketch round their share down apart: below the whole count
          // halved by less than 2 per part, never above it.
          assert.ok(row.lowerBound <= count, `key ${row.key}: lower ${row.lowerBound} > ${count}`);
          assert.ok(
            row.upperBound >= count - 4,
            `key ${row.key}: upper ${row.upperBound} < ${count} - 4`,
          );
        }
      },
    ),
    { numRuns: 150 },
  );
});

test('shared decay racing 3 workers that increment one key: every increment counts at least halved, none is lost', async () => {
  // One cell: the decay is that cell's halving alone, so "during" is the race itself.
  const sketch = new CountMinSketch({ secret, shared: true, width: 1, depth: 1 });
  const control = new Int32Array(new SharedArrayBuffer(12));
  const worker = new URL('../helpers/aging-worker.js', import.meta.url);
  const tasks = [1, 2, 3].map((seed) => ({
    handle: sketch.handle,
    control,
    seed,
    count: 0,
    racing: 'hot',
  }));
  const threads = tasks.map((task) => new Worker(worker, { workerData: task }));
  const results = Promise.all(
    threads.map(async (thread) => {
      const [result] = (await once(thread, 'message')) as [{ made: number[] }];
      await thread.terminate();
      return result.made;
    }),
  );
  while (sketch.estimate('hot') < 200_000) await sleep(1);
  Atomics.store(control, 2, 1);
  sketch.decay(0.5); // while the workers increment
  Atomics.store(control, 2, 2);
  await sleep(20);
  Atomics.store(control, 0, 1);
  const made = (await results).reduce((sum, counts) => sum.map((n, i) => n + counts[i]), [0, 0, 0]);
  const [before, during, after] = made;
  assert.ok(after > 0 && before > 0, `${made}`);
  // Each increment landed before the halving of its cell (and was halved with it) or after
  // it (whole): at least half of what came before or during, plus all that came after. A
  // halving by plain stores would erase what landed between its read and its write.
  assert.ok(sketch.estimate('hot') >= Math.floor((before + during) / 2) + after, `${made}`);
  assert.ok(sketch.estimate('hot') <= before + during + after);
});
