/**
 * `foldEvery` (issue 22, item 5): each object counts into a delta of its own and folds it into
 * the shared cells. What a user relies on: nothing counted is lost once folded (the cells equal
 * the local sketch of the same events), an estimate is never under what its object counted plus
 * what every object folded, the delta is folded by itself once it holds foldEvery, and a clear
 * by any thread forgets the deltas too.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { test } from 'node:test';
import { Worker } from 'node:worker_threads';
import fc from 'fast-check';
import { CountMinSketch } from '../../src/index.js';
import type { WorkerTask } from '../helpers/sketch-worker.js';
import { seededUpdates } from '../helpers/streams.js';

const secret = new Uint8Array(16).fill(21);
const WORKER = new URL('../helpers/sketch-worker.js', import.meta.url);

test('4 workers folding every 1,000 over 1M increments: the cells, total and flags equal the local sketch of the same events', async () => {
  const options = { width: 4096, depth: 4, secret };
  const shared = new CountMinSketch({ ...options, shared: true });
  const tasks = [1, 2, 3, 4].map((seed) => ({
    kind: 'stream' as const,
    seed,
    count: 250_000,
    keySpace: 100_000,
    foldEvery: 1000,
  }));
  const start = new Int32Array(new SharedArrayBuffer(4));
  const workers = tasks.map(
    (task) =>
      new Worker(WORKER, { workerData: { handle: shared.handle, start, task } as WorkerTask }),
  );
  await Promise.all(workers.map((worker) => once(worker, 'online')));
  Atomics.store(start, 0, 1);
  Atomics.notify(start, 0);
  await Promise.all(
    workers.map(async (worker) => {
      await once(worker, 'message');
      await worker.terminate();
    }),
  );
  const local = new CountMinSketch(options);
  for (const task of tasks) {
    const next = seededUpdates(task.seed, task.keySpace);
    for (let i = 0; i < task.count; i++) local.increment(next(), next.by);
  }
  assert.ok(local.total >= 250_000 * 4);
  assert.equal(shared.total, local.total);
  assert.deepEqual(shared.toBytes(), local.toBytes());
});

/** One step of a script run by several objects attached to one shared sketch. */
const step = fc.oneof(
  fc.record({
    op: fc.constant('inc' as const),
    who: fc.nat(2),
    key: fc.nat(20),
    by: fc.integer({ min: 0, max: 9 }),
  }),
  fc.record({ op: fc.constant('fold' as const), who: fc.nat(2) }),
  fc.record({ op: fc.constant('clear' as const), who: fc.nat(2) }),
);

for (const engine of ['wasm', 'js'] as const) {
  test(`never under what an object counted plus what all folded; folds by itself at foldEvery; clears forget the deltas (${engine})`, () => {
    fc.assert(
      fc.property(
        fc.array(step, { maxLength: 120 }),
        fc.integer({ min: 1, max: 30 }),
        (steps, foldEvery) => {
          // Narrow rows, so that keys share cells; three objects stand for three threads.
          const sketch = new CountMinSketch({ width: 8, depth: 2, secret, shared: true, engine });
          const objects = [0, 1, 2].map(() =>
            CountMinSketch.attach(sketch.handle, { engine, foldEvery }),
          );
          // The model: what was folded, and what each object holds unfolded, key by key.
          let folded = new Map<number, number>();
          let own = objects.map(() => new Map<number, number>());
          const amount = (counts: Map<number, number>) =>
            [...counts.values()].reduce((a, b) => a + b, 0);
          const foldIn = (who: number) => {
            for (const [key, count] of own[who]) folded.set(key, (folded.get(key) ?? 0) + count);
            own[who] = new Map();
          };
          for (const s of steps) {
            const object = objects[s.who];
            if (s.op === 'inc') {
              const estimate = object.increment(s.key, s.by);
              own[s.who].set(s.key, (own[s.who].get(s.key) ?? 0) + s.by);
              const floor = (folded.get(s.key) ?? 0) + (own[s.who].get(s.key) ?? 0);
              assert.ok(estimate >= floor, `increment returned ${estimate} < ${floor}`);
              if (amount(own[s.who]) >= foldEvery) foldIn(s.who);
            } else if (s.op === 'fold') {
              object.fold();
              foldIn(s.who);
            } else {
              object.clear();
              folded = new Map();
              own = objects.map(() => new Map());
            }
            for (let who = 0; who < objects.length; who++) {
              assert.equal(objects[who].total, amount(folded) + amount(own[who]));
              for (let other = 0; other < objects.length; other++) {
                assert.ok(amount(own[other]) < foldEvery, 'a delta never holds foldEvery');
              }
              for (let key = 0; key <= 20; key++) {
                const estimate = objects[who].estimate(key);
                const floor = (folded.get(key) ?? 0) + (own[who].get(key) ?? 0);
                // The true count less what the others hold unfolded, which stays below
                // foldEvery each (the stated bound).
                assert.ok(estimate >= floor, `object ${who}, key ${key}: ${estimate} < ${floor}`);
              }
            }
          }
          // Everyone folds: the shared cells are the local sketch of the events not cleared.
          objects.forEach((object, who) => {
            object.fold();
            foldIn(who);
          });
          const local = new CountMinSketch({ width: 8, depth: 2, secret, engine });
          for (const [key, count] of folded) local.increment(key, count);
          for (let key = 0; key <= 20; key++) {
            assert.equal(sketch.estimate(key), local.estimate(key), `key ${key}`);
          }
          assert.equal(sketch.total, local.total);
        },
      ),
    );
  });
}

test('merge takes a folding sketch with its delta; toBytes folds first; decay scales the delta', () => {
  const sketch = new CountMinSketch({ width: 64, depth: 3, secret, shared: true });
  const folding = CountMinSketch.attach(sketch.handle, { foldEvery: 1000 });
  folding.increment('a', 40);
  assert.equal(sketch.estimate('a'), 0, 'not folded yet');
  const target = new CountMinSketch({ width: 64, depth: 3, secret });
  target.merge(folding);
  assert.equal(target.estimate('a'), 40);
  assert.equal(sketch.estimate('a'), 40, 'the merge folded it');
  folding.increment('b', 8);
  const copy = CountMinSketch.fromBytes(folding.toBytes(), { secret });
  assert.equal(copy.estimate('b'), 8);
  folding.increment('c', 10);
  folding.decay(0.5);
  assert.equal(folding.estimate('c'), 5);
});

test('foldEvery refuses what it cannot keep exact, naming the parameter', () => {
  const base = { width: 64, depth: 3, secret, shared: true };
  for (const bad of [0, 1.5, -3, 2 ** 30 + 1, Number.NaN]) {
    assert.throws(() => new CountMinSketch({ ...base, foldEvery: bad }), {
      name: 'RangeError',
      message: /foldEvery/,
    });
  }
  assert.throws(() => new CountMinSketch({ ...base, foldEvery: '10' as unknown as number }), {
    name: 'TypeError',
    message: /foldEvery/,
  });
  assert.throws(() => new CountMinSketch({ width: 64, depth: 3, foldEvery: 10 }), {
    name: 'RangeError',
    message: /foldEvery is for a shared plain sketch/,
  });
  assert.throws(() => new CountMinSketch({ ...base, conservative: true, foldEvery: 10 }), {
    name: 'RangeError',
    message: /foldEvery/,
  });
  assert.throws(() => new CountMinSketch({ ...base, halfLife: { events: 1000 }, foldEvery: 10 }), {
    name: 'RangeError',
    message: /foldEvery/,
  });
  const handle = new CountMinSketch(base).handle;
  assert.throws(() => CountMinSketch.attach(handle, { foldEvery: 0 }), {
    name: 'RangeError',
    message: /foldEvery/,
  });
  const folding = CountMinSketch.attach(handle, { foldEvery: 10 });
  assert.throws(() => folding.decrement('a'), { name: 'TypeError', message: /foldEvery/ });
});
