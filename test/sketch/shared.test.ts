import assert from 'node:assert/strict';
import { once } from 'node:events';
import { test } from 'node:test';
import { Worker } from 'node:worker_threads';
import fc from 'fast-check';
import { CountMinSketch, SATURATED, type SketchHandle } from '../../src/index.js';
import type { WorkerResult, WorkerTask } from '../helpers/sketch-worker.js';
import { seededUpdates } from '../helpers/streams.js';

const secret = new Uint8Array(16).fill(9);
const WORKER = new URL('../helpers/sketch-worker.js', import.meta.url);

/** Workers attached to `handle`, one per task, released at once; resolves to their results. */
async function runWorkers(
  handle: SketchHandle,
  tasks: WorkerTask['task'][],
  whileRunning?: (workers: Worker[]) => Promise<void>,
): Promise<WorkerResult[]> {
  const start = new Int32Array(new SharedArrayBuffer(4));
  const workers = tasks.map((task) => new Worker(WORKER, { workerData: { handle, start, task } }));
  await Promise.all(workers.map((worker) => once(worker, 'online')));
  Atomics.store(start, 0, 1);
  Atomics.notify(start, 0);
  const results = Promise.all(
    workers.map(async (worker) => {
      const [result] = (await once(worker, 'message')) as [WorkerResult];
      await worker.terminate();
      return result;
    }),
  );
  if (whileRunning !== undefined) await whileRunning(workers);
  return results;
}

function replay(sketch: CountMinSketch, seed: number, count: number, keySpace: number): void {
  const next = seededUpdates(seed, keySpace);
  for (let i = 0; i < count; i++) sketch.increment(next(), next.by);
}

function sumCounts(results: WorkerResult[]): Map<string, number> {
  const total = new Map<string, number>();
  for (const result of results) {
    assert.equal(result.kind, 'counts');
    if (result.kind !== 'counts') continue;
    for (const [key, count] of result.counts) total.set(key, (total.get(key) ?? 0) + count);
  }
  return total;
}

test('4 workers x 1M increments over 100k keys: every counter equals the local sketch of the same multiset, total exact', async () => {
  const options = { width: 4096, depth: 4, secret };
  const shared = new CountMinSketch({ ...options, shared: true });
  const tasks = [1, 2, 3, 4].map((seed) => ({
    kind: 'stream' as const,
    seed,
    count: 1_000_000,
    keySpace: 100_000,
  }));
  await runWorkers(shared.handle, tasks);
  const local = new CountMinSketch(options);
  for (const task of tasks) replay(local, task.seed, task.count, task.keySpace);
  assert.equal(shared.total, local.total);
  assert.ok(local.total >= 4_000_000);
  assert.deepEqual(shared.toBytes(), local.toBytes(), 'every cell, the total and the flags');
});

for (const conservative of [false, true]) {
  const rule = conservative ? 'conservative' : 'plain';
  test(`${rule}: workers hammering one key past the limit never see a wrapped estimate`, async () => {
    const sketch = new CountMinSketch({ width: 64, depth: 2, secret, shared: true, conservative });
    const start = SATURATED - 20_000_000;
    sketch.increment('hot', start);
    const tasks = [1, 2, 3, 4].map(() => ({
      kind: 'hammer' as const,
      key: 'hot',
      rounds: 50_000,
      sign: 1 as const,
    }));
    const results = await runWorkers(sketch.handle, tasks);
    for (const result of results) {
      assert.equal(result.kind, 'hammered');
      if (result.kind !== 'hammered') continue;
      assert.deepEqual(result.violations, []);
      assert.ok(result.first >= start);
      assert.equal(result.last, SATURATED, 'every worker ends on the saturated value');
    }
    assert.equal(sketch.estimate('hot'), SATURATED);
    assert.ok(sketch.saturated);
    if (!conservative) assert.equal(sketch.decrement('hot', 5), SATURATED, 'sticky');
  });
}

test('plain: workers hammering one key down past -(2^31 - 1) never see it wrap', async () => {
  const sketch = new CountMinSketch({ width: 64, depth: 2, secret, shared: true });
  sketch.decrement('cold', SATURATED - 20_000_000);
  const tasks = [1, 2, 3].map(() => ({
    kind: 'hammer' as const,
    key: 'cold',
    rounds: 50_000,
    sign: -1 as const,
  }));
  for (const result of await runWorkers(sketch.handle, tasks)) {
    assert.ok(result.kind === 'hammered' && result.violations.length === 0, JSON.stringify(result));
    assert.equal(result.last, -SATURATED);
  }
  assert.ok(sketch.saturated);
  assert.equal(sketch.increment('cold', 1000), -SATURATED, 'sticky below too');
});

test('conservative update from 4 workers never underestimates, not even the key they all hammer at once', async () => {
  // Narrow rows, so that keys share cells and the workers race on the same cells all the time.
  const sketch = new CountMinSketch({
    width: 256,
    depth: 3,
    secret,
    shared: true,
    conservative: true,
  });
  const tasks = [11, 12, 13, 14].map((seed) => ({
    kind: 'hot-and-cold' as const,
    seed,
    count: 400_000,
    keySpace: 2000,
  }));
  const truth = sumCounts(await runWorkers(sketch.handle, tasks));
  let sum = 0;
  for (const [key, count] of truth) {
    sum += count;
    assert.ok(sketch.estimate(key) >= count, `${key}: estimate ${sketch.estimate(key)} < ${count}`);
  }
  assert.equal(sketch.total, sum);
  // The conservative rule must still pay off over a plain sketch fed the same multiset.
  const plain = new CountMinSketch({ width: 256, depth: 3, secret });
  for (const [key, count] of truth) plain.increment(key, count);
  assert.ok(sketch.estimate('hot') <= plain.estimate('hot'));
});

for (const conservative of [false, true]) {
  test(`${conservative ? 'conservative' : 'plain'}: a worker terminated mid-stream leaves the sketch usable, and nobody waits for it`, async () => {
    const sketch = new CountMinSketch({ width: 512, depth: 4, secret, shared: true, conservative });
    const handle = sketch.handle;
    const start = new Int32Array(new SharedArrayBuffer(4));
    const victim = new Worker(WORKER, {
      workerData: { handle, start, task: { kind: 'forever', seed: 99 } },
    });
    Atomics.store(start, 0, 1);
    Atomics.notify(start, 0);
    await once(victim, 'message'); // it is in its loop
    await victim.terminate();
    const results = await runWorkers(
      handle,
      [21, 22].map((seed) => ({
        kind: 'hot-and-cold' as const,
        seed,
        count: 100_000,
        keySpace: 500,
      })),
    );
    const truth = sumCounts(results);
    sketch.increment('after', 7);
    truth.set('after', 7);
    let sum = 0;
    for (const [key, count] of truth) {
      sum += count;
      assert.ok(sketch.estimate(key) >= count, key);
    }
    assert.ok(sketch.total >= sum, 'the survivors and the main thread are all in the total');
  });
}

test('attach refuses anything that is not the handle of a shared sketch', () => {
  const sketch = new CountMinSketch({ width: 8, depth: 4, secret, shared: true });
  const handle = sketch.handle;
  const cases: [unknown, typeof TypeError | typeof RangeError, RegExp][] = [
    [null, TypeError, /handle/],
    [42, TypeError, /handle/],
    [{ ...handle, buffer: new ArrayBuffer(handle.buffer.byteLength) }, TypeError, /handle\.buffer/],
    [{ ...handle, buffer: new Uint8Array(4) }, TypeError, /handle\.buffer/],
    [
      { ...handle, buffer: new SharedArrayBuffer(handle.buffer.byteLength + 4) },
      RangeError,
      /handle\.buffer/,
    ],
    [
      { ...handle, buffer: new SharedArrayBuffer(handle.buffer.byteLength) },
      RangeError,
      /not the memory/,
    ],
    [{ ...handle, width: 16, depth: 2 }, RangeError, /8 x 4/],
    [{ ...handle, width: 4 }, RangeError, /handle\.buffer/],
    [{ ...handle, width: 1.5 }, RangeError, /handle\.width/],
    [{ ...handle, depth: '4' }, TypeError, /handle\.depth/],
    [{ ...handle, conservative: true }, RangeError, /plain/],
    [{ ...handle, conservative: 1 }, TypeError, /handle\.conservative/],
    [{ ...handle, secret: new Uint8Array(16).fill(1) }, RangeError, /secret/],
    [{ ...handle, secret: undefined }, TypeError, /handle\.secret/],
    [{ ...handle, width: 2 ** 20, depth: 2 ** 10 }, RangeError, /2\^28/],
  ];
  for (const [bad, type, message] of cases) {
    assert.throws(
      () => CountMinSketch.attach(bad as SketchHandle),
      (e: unknown) => e instanceof type && message.test((e as Error).message),
      JSON.stringify(bad, (_, v) =>
        v instanceof ArrayBuffer || ArrayBuffer.isView(v) ? String(v) : v,
      ),
    );
  }
  assert.throws(() => new CountMinSketch({ width: 8 }).handle, TypeError);
  assert.throws(() => new CountMinSketch({ shared: 'yes' as never }), /shared/);
});

test('a shared sketch behaves exactly as a local one, and its attachments see the same counts', () => {
  const keyArb = fc.oneof(fc.integer({ min: 0, max: 30 }), fc.constantFrom('a', 'b'));
  fc.assert(
    fc.property(
      fc.array(fc.tuple(keyArb, fc.integer({ min: -SATURATED, max: SATURATED })), {
        maxLength: 100,
      }),
      fc.boolean(),
      (stream, conservative) => {
        const options = { width: 8, depth: 3, secret, conservative };
        const local = new CountMinSketch(options);
        const shared = new CountMinSketch({ ...options, shared: true });
        const attached = CountMinSketch.attach(shared.handle);
        stream.forEach(([key, amount], i) => {
          const target = i % 2 === 0 ? shared : attached;
          if (amount >= 0) {
            assert.equal(target.increment(key, amount), local.increment(key, amount));
          } else if (!conservative) {
            assert.equal(target.decrement(key, -amount), local.decrement(key, -amount));
          }
        });
        assert.deepEqual(shared.toBytes(), local.toBytes());
        assert.deepEqual(attached.toBytes(), local.toBytes());
        assert.equal(attached.total, local.total);
        assert.equal(attached.saturated, local.saturated);
      },
    ),
  );
});

test('toBytes while workers write: a valid sketch holding everything counted before it', async () => {
  const sketch = new CountMinSketch({ width: 1024, depth: 4, secret, shared: true });
  for (let key = 0; key < 1000; key++) sketch.increment(`before-${key}`, key + 1);
  const before = sketch.total;
  let copy: CountMinSketch | undefined;
  await runWorkers(
    sketch.handle,
    [31, 32].map((seed) => ({ kind: 'stream' as const, seed, count: 2_000_000, keySpace: 50_000 })),
    async () => {
      copy = CountMinSketch.fromBytes(sketch.toBytes(), { secret });
    },
  );
  assert.ok(copy !== undefined);
  for (let key = 0; key < 1000; key++) assert.ok(copy.estimate(`before-${key}`) >= key + 1);
  assert.ok(copy.total >= before);
  assert.ok(sketch.total >= copy.total);
});

test('merge into a shared plain sketch while workers write: still exactly the sum', async () => {
  const options = { width: 1024, depth: 4, secret };
  const sketch = new CountMinSketch({ ...options, shared: true });
  const other = new CountMinSketch(options);
  replay(other, 77, 300_000, 20_000);
  const tasks = [41, 42].map((seed) => ({
    kind: 'stream' as const,
    seed,
    count: 1_000_000,
    keySpace: 20_000,
  }));
  await runWorkers(sketch.handle, tasks, async () => {
    sketch.merge(other);
  });
  const expected = new CountMinSketch(options);
  replay(expected, 77, 300_000, 20_000);
  for (const task of tasks) replay(expected, task.seed, task.count, task.keySpace);
  assert.deepEqual(sketch.toBytes(), expected.toBytes());
});

test('merge into a shared conservative sketch before the workers start keeps both counts', async () => {
  const options = { width: 256, depth: 3, secret, conservative: true };
  const sketch = new CountMinSketch({ ...options, shared: true });
  const saved = new CountMinSketch(options);
  for (let i = 0; i < 500; i++) saved.increment('hot', 3);
  sketch.merge(saved);
  const truth = sumCounts(
    await runWorkers(
      sketch.handle,
      [51, 52, 53].map((seed) => ({
        kind: 'hot-and-cold' as const,
        seed,
        count: 100_000,
        keySpace: 1000,
      })),
    ),
  );
  assert.ok(sketch.estimate('hot') >= (truth.get('hot') ?? 0) + 1500);
  for (const [key, count] of truth) if (key !== 'hot') assert.ok(sketch.estimate(key) >= count);
});

test('clear while workers write: what they count after it is counted', async () => {
  const sketch = new CountMinSketch({ width: 512, depth: 4, secret, shared: true });
  const flag = new Int32Array(new SharedArrayBuffer(4));
  const results = await runWorkers(
    sketch.handle,
    [61, 62].map((seed) => ({ kind: 'until-cleared' as const, seed, flag, count: 100_000 })),
    async () => {
      await new Promise((resolve) => setTimeout(resolve, 50));
      sketch.clear();
      Atomics.store(flag, 0, 1);
    },
  );
  const truth = sumCounts(results);
  for (const [key, count] of truth) assert.ok(sketch.estimate(key) >= count, key);
  sketch.clear();
  assert.equal(sketch.total, 0);
  assert.equal(sketch.saturated, false);
  assert.equal(sketch.estimate('after-1'), 0);
});

test('a shared sketch round-trips through bytes, into shared memory again', () => {
  const sketch = new CountMinSketch({ width: 64, depth: 3, secret, shared: true });
  sketch.increment('k', 12);
  sketch.increment('big', SATURATED);
  const bytes = sketch.toBytes();
  const restored = CountMinSketch.fromBytes(bytes, { secret, shared: true });
  assert.ok(restored.shared);
  assert.deepEqual(restored.toBytes(), bytes);
  assert.ok(restored.saturated);
  const attached = CountMinSketch.attach(restored.handle);
  assert.equal(attached.estimate('k'), 12);
  assert.equal(attached.total, 12 + SATURATED);
  // 64 * 3 * 4 bytes of cells and 4,160 of header and total, in one 64 KiB page of shared memory.
  assert.equal(restored.memoryBytes, 65536);
});

test('the total stays exact past 2^31 per thread and past every word of the shared total', () => {
  // Each add of 2^31 - 1 fills a 32-bit word of the total; 1,100 of them use up the pool of
  // words and go on in the 64-bit overflow.
  const sketch = new CountMinSketch({ width: 2048, depth: 2, secret, shared: true });
  const other = CountMinSketch.attach(sketch.handle);
  for (let i = 0; i < 1100; i++) {
    (i % 3 === 0 ? other : sketch).increment(`key-${i}`, SATURATED);
    if (i % 7 === 0) sketch.increment('small', 1);
  }
  assert.equal(sketch.total, 1100 * SATURATED + 158);
  assert.equal(other.total, sketch.total);
  sketch.decrement('small', 3);
  assert.equal(sketch.total, 1100 * SATURATED + 155);
  sketch.clear();
  assert.equal(sketch.total, 0);
  other.increment('x', 5);
  sketch.increment('x', SATURATED);
  assert.equal(other.total, SATURATED + 5, 'words are reused after clear');
});
