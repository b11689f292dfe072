import assert from 'node:assert/strict';
import { once } from 'node:events';
import { test } from 'node:test';
import { Worker } from 'node:worker_threads';
import fc from 'fast-check';
import { HeavyHitters, type HeavyHittersTable } from '../../src/index.js';
import type { HittersTask } from '../helpers/hitters-worker.js';
import { zipf } from '../helpers/zipf.js';

const WORKER = new URL('../helpers/hitters-worker.js', import.meta.url);

test('parts over one shared sketch, combined: every bound holds, nothing is counted twice', () => {
  const keyArb = fc.oneof(
    fc.integer({ min: 0, max: 40 }),
    fc.constantFrom('x', 'y'),
    fc.constantFrom(Uint8Array.of(1, 2), Uint8Array.of(3)),
  );
  fc.assert(
    fc.property(
      fc.array(fc.tuple(keyArb, fc.integer({ min: 0, max: 2 }), fc.integer({ min: 1, max: 9 })), {
        maxLength: 400,
      }),
      fc.integer({ min: 1, max: 4 }),
      (stream, k) => {
        const main = new HeavyHitters({ k, capacity: 2 * k, width: 16, depth: 2, shared: true });
        const parts = [main, HeavyHitters.attach(main.handle), HeavyHitters.attach(main.handle)];
        const truth = new Map<string, number>();
        const name = (key: unknown) =>
          key instanceof Uint8Array ? `bytes:${key.join(',')}` : `${typeof key}:${String(key)}`;
        for (const [key, part, by] of stream) {
          parts[part].add(key, by);
          truth.set(name(key), (truth.get(name(key)) ?? 0) + by);
        }
        main.combine(parts[1].table()).combine(parts[2].table());
        const rows = main.top(1000);
        assert.ok(rows.length <= 3 * 2 * k);
        const seen = new Set<string>();
        for (const row of rows) {
          assert.ok(!seen.has(name(row.key)), 'one row per key');
          seen.add(name(row.key));
          const count = truth.get(name(row.key)) ?? 0;
          assert.ok(
            row.lowerBound <= count && count <= row.upperBound,
            `${name(row.key)}: ${count} outside [${row.lowerBound}, ${row.upperBound}]`,
          );
        }
        assert.equal(
          main.total,
          [...truth.values()].reduce((a, b) => a + b, 0),
        );
      },
    ),
  );
});

test('keys that fit in every table are counted exactly across the parts', () => {
  // The main part only combines, as `hotcount top --threads` does: having counted nothing, it
  // is no part that could have missed a key.
  const main = new HeavyHitters({ k: 10, shared: true });
  const a = HeavyHitters.attach(main.handle);
  const b = HeavyHitters.attach(main.handle);
  for (let key = 1; key <= 10; key++) {
    for (let i = 0; i < key; i++) a.add(`key-${key}`);
    for (let i = 0; i < 100 * key; i++) b.add(`key-${key}`);
  }
  const rows = main.combine(a.table()).combine(b.table()).top();
  assert.deepEqual(
    rows.map((row) => [row.key, row.lowerBound, row.upperBound]),
    [10, 9, 8, 7, 6, 5, 4, 3, 2, 1].map((key) => [`key-${key}`, 101 * key, 101 * key]),
  );
  assert.equal(a.table().counted + b.table().counted, main.total);
});

test('a key that some part saw without tracking it is bounded by the sketch, not by the parts that tracked it', () => {
  const main = new HeavyHitters({ k: 2, capacity: 2, shared: true });
  const busy = HeavyHitters.attach(main.handle);
  main.add('x');
  // busy's table is full of keys far heavier than x, so it never lets x in.
  busy.add('heavy-1', 1_000_000);
  busy.add('heavy-2', 1_000_000);
  for (let i = 0; i < 100; i++) busy.add('x');
  const row = main
    .combine(busy.table())
    .top(3)
    .find((r) => r.key === 'x');
  assert.ok(row !== undefined);
  assert.equal(row.lowerBound, 1, 'main counted one x exactly');
  assert.ok(row.upperBound >= 101, `upper bound ${row.upperBound} misses what busy saw`);
});

test('4 worker threads on a Zipf stream report the top keys of the single-threaded run, within bounds', async () => {
  const keys = 100_000;
  const events = 2_000_000;
  const seed = 7;
  const hitters = new HeavyHitters({ k: 20, shared: true });
  const tasks: HittersTask[] = [0, 1, 2, 3].map((part) => ({
    handle: hitters.handle,
    keys,
    seed,
    events,
    part,
    parts: 4,
  }));
  const tables = await Promise.all(
    tasks.map(async (task) => {
      const worker = new Worker(WORKER, { workerData: task });
      const [table] = (await once(worker, 'message')) as [HeavyHittersTable];
      await worker.terminate();
      return table;
    }),
  );
  for (const table of tables) hitters.combine(table);

  const single = new HeavyHitters({ k: 20 });
  const truth = new Int32Array(keys);
  const next = zipf(keys, 1.0, seed);
  for (let i = 0; i < events; i++) {
    const key = next();
    truth[key]++;
    single.add(key);
  }
  const threaded = hitters.top();
  assert.deepEqual(
    threaded.map((row) => row.key),
    single.top().map((row) => row.key),
  );
  for (const row of threaded) {
    const count = truth[row.key as number];
    assert.ok(row.lowerBound <= count && count <= row.upperBound, `key ${row.key}`);
  }
  assert.equal(hitters.total, events);
});

test('clear() on any part clears every part: no table keeps counts the sketch lost', () => {
  fc.assert(
    fc.property(
      fc.array(
        fc.tuple(
          fc.integer({ min: 0, max: 6 }),
          fc.integer({ min: 0, max: 2 }),
          fc.integer({ min: 0, max: 9 }),
        ),
        { maxLength: 120 },
      ),
      fc.array(fc.integer({ min: 0, max: 119 }), { maxLength: 3 }),
      fc.integer({ min: 0, max: 2 }),
      (stream, clearsAt, clearer) => {
        const main = new HeavyHitters({ k: 2, width: 4, depth: 2, shared: true });
        const parts = [main, HeavyHitters.attach(main.handle), HeavyHitters.attach(main.handle)];
        let truth = new Map<number, number>();
        stream.forEach(([key, part, by], i) => {
          if (clearsAt.includes(i)) {
            parts[clearer].clear();
            truth = new Map();
          }
          parts[part].add(key, by);
          truth.set(key, (truth.get(key) ?? 0) + by);
        });
        const check = (rows: { key: unknown; lowerBound: number; upperBound: number }[]) => {
          for (const row of rows) assert.ok(row.lowerBound <= row.upperBound, JSON.stringify(row));
        };
        for (const part of parts) check(part.top(100));
        main.combine(parts[1].table()).combine(parts[2].table());
        for (const row of main.top(100)) {
          const count = truth.get(row.key as number) ?? 0;
          assert.ok(row.lowerBound <= count && count <= row.upperBound, `${row.key}: ${count}`);
        }
      },
    ),
  );
  const main = new HeavyHitters({ k: 2, shared: true });
  const part = HeavyHitters.attach(main.handle);
  for (let i = 0; i < 10; i++) part.add('x');
  const stale = part.table();
  main.clear();
  part.add('x');
  assert.deepEqual(part.top(), [{ key: 'x', count: 1, lowerBound: 1, upperBound: 1 }]);
  assert.throws(() => main.combine(stale), /before the sketch was cleared/);
});

test('combine refuses tables it cannot add without error', () => {
  const main = new HeavyHitters({ k: 2, shared: true });
  const part = HeavyHitters.attach(main.handle);
  part.add('a');
  const table = part.table();
  assert.throws(() => main.combine(main.table()), /already counted/);
  main.combine(table);
  assert.throws(() => main.combine(table), /already counted/);
  const elsewhere = new HeavyHitters({ k: 2, shared: true });
  assert.throws(
    () => elsewhere.combine(HeavyHitters.attach(main.handle).table()),
    /another sketch/,
  );
  const fresh = () => HeavyHitters.attach(main.handle).table();
  for (const [bad, type, message] of [
    [null, TypeError, /table/],
    [{ ...fresh(), entries: 'x' }, TypeError, /table/],
    [{ ...fresh(), entries: [{ key: {}, base: 0, exact: 1 }] }, TypeError, /entries\[0\]\.key/],
    [{ ...fresh(), entries: [{ key: 'k', base: -1, exact: 1 }] }, RangeError, /entries\[0\]\.base/],
    [{ ...fresh(), entries: [{ key: 'k', base: 0, exact: 0.5 }] }, RangeError, /exact/],
    [{ ...fresh(), counted: undefined }, TypeError, /table\.counted/],
  ] as const) {
    assert.throws(
      () => main.combine(bad as never),
      (e: unknown) => e instanceof type && message.test((e as Error).message),
    );
  }
  assert.throws(() => new HeavyHitters({ k: 2 }).handle, TypeError);
  assert.throws(() => HeavyHitters.attach(null as never), TypeError);
});

test('a part lists its byte keys, of any length, in table() as copies that combine whole', () => {
  const main = new HeavyHitters({ k: 20, shared: true });
  const a = HeavyHitters.attach(main.handle);
  const b = HeavyHitters.attach(main.handle);
  const keyOf = (n: number) => new Uint8Array(n * 50).fill(n); // 0 to 950 bytes
  for (let n = 0; n < 20; n++) {
    for (let i = 0; i <= n; i++) a.add(keyOf(n));
    b.addBytes(Buffer.concat([Buffer.from('>'), keyOf(n)]), 1, 1 + n * 50, 100);
  }
  const table = a.table();
  (table.entries[0].key as Uint8Array).fill(0xff); // a copy: a's table is unchanged
  const rows = main.combine(a.table()).combine(b.table()).top();
  assert.deepEqual(
    rows.map((row) => [row.key, row.lowerBound, row.upperBound]),
    Array.from({ length: 20 }, (_, i) => 19 - i).map((n) => [keyOf(n), n + 101, n + 101]),
  );
});

test('heavy hitters with sketches of their own combine: their sketches merge, and every bound holds over the whole stream', () => {
  const secret = new Uint8Array(16).fill(21);
  const stream = fc.array(
    fc.tuple(
      fc.integer({ min: 0, max: 2 }),
      fc.integer({ min: 0, max: 40 }),
      fc.integer({ min: 1, max: 5 }),
    ),
    { maxLength: 600 },
  );
  fc.assert(
    fc.property(stream, fc.boolean(), (events, conservative) => {
      const options = { k: 3, capacity: 5, width: 16, depth: 2, secret, conservative };
      const parts = [0, 1, 2].map(() => new HeavyHitters(options));
      const truth = new Map<number, number>();
      for (const [part, key, by] of events) {
        parts[part].add(key, by);
        truth.set(key, (truth.get(key) ?? 0) + by);
      }
      const tables = parts.map((part) => part.table());
      const [main] = parts;
      for (const table of tables.slice(1)) main.combine(table);
      assert.equal(
        main.total,
        events.reduce((sum, [, , by]) => sum + by, 0),
      );
      for (const row of main.top(15)) {
        const count = truth.get(row.key as number) ?? 0;
        assert.ok(
          row.lowerBound <= count && count <= row.upperBound,
          `key ${row.key}: ${count} outside [${row.lowerBound}, ${row.upperBound}]`,
        );
      }
      // The merged sketch holds every event no table counted exactly.
      const exact = new Map<number, number>();
      for (const table of tables) {
        for (const { key, exact: n } of table.entries) {
          exact.set(key as number, (exact.get(key as number) ?? 0) + n);
        }
      }
      for (const [key, count] of truth) {
        assert.ok(main.sketch.estimate(key) + (exact.get(key) ?? 0) >= count);
      }
    }),
    { numRuns: 200 },
  );
  const main = new HeavyHitters({ k: 2, secret });
  main.add('x', 3);
  const before = main.top();
  for (const [other, message] of [
    [new HeavyHitters({ k: 2 }), /secret/],
    [new HeavyHitters({ k: 2, secret, width: 8 }), /dimensions/],
    [new HeavyHitters({ k: 2, secret, conservative: false }), /rule/],
  ] as const) {
    other.add('x', 5);
    assert.throws(() => main.combine(other.table()), message);
  }
  assert.throws(
    () => main.combine({ ...main.table(), part: 'p', sketch: 'no' as never }),
    TypeError,
  );
  assert.deepEqual(main.top(), before, 'a refused table changes nothing');
  assert.equal(main.total, 3);
});

test('a saturated estimate still bounds a combined key (by the total), and a part that combined others cannot pass its table on', () => {
  const SAT = 2 ** 31 - 1;
  const secret = new Uint8Array(16).fill(4);
  for (const engine of ['wasm', 'js'] as const) {
    const p = new HeavyHitters({ k: 1, capacity: 1, secret, engine });
    const q = new HeavyHitters({ k: 1, capacity: 1, secret, engine });
    q.add('a', SAT); // q tracks a
    q.add('x', SAT); // turned away twice: q's cells for x stick at SAT
    q.add('x', SAT);
    p.add('x', 1);
    p.combine(q.table());
    const x = p.top(5).find((row) => row.key === 'x');
    assert.ok(x !== undefined && x.upperBound >= 1 + 2 * SAT, JSON.stringify(x));
  }
  // The exact counts of a combined table are in no sketch: passed on, they would be lost.
  const r = new HeavyHitters({ k: 2, secret });
  const s = new HeavyHitters({ k: 2, secret });
  r.add('hot', 100);
  s.add('hot', 1);
  s.combine(r.table());
  assert.throws(() => s.table(), { name: 'RangeError', message: /combined other tables/ });
});
