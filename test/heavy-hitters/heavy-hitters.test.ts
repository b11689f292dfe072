import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { HeavyHitters } from '../../src/index.js';
import { zipf } from '../helpers/zipf.js';

test('on Zipf(1.0), 10M events over 1M keys: at least 99 of the exact top 100, every count within its bounds', () => {
  const keys = 1_000_000;
  const next = zipf(keys, 1.0, 42);
  const truth = new Int32Array(keys);
  const hh = new HeavyHitters({ k: 100 });
  for (let i = 0; i < 10_000_000; i++) {
    const key = next();
    truth[key]++;
    hh.add(key);
  }
  const exactTop = Array.from(truth.keys())
    .sort((a, b) => truth[b] - truth[a])
    .slice(0, 100);
  const reported = hh.top();
  assert.equal(reported.length, 100);
  const found = new Set(reported.map((row) => row.key));
  const hits = exactTop.filter((key) => found.has(key)).length;
  assert.ok(hits >= 99, `only ${hits} of the exact top 100 reported`);
  for (const row of reported) {
    const count = truth[row.key as number];
    assert.ok(
      row.lowerBound <= count && count <= row.upperBound,
      `key ${row.key}: ${count} outside [${row.lowerBound}, ${row.upperBound}]`,
    );
  }
  for (let i = 1; i < reported.length; i++)
    assert.ok(reported[i - 1].count >= reported[i].count, 'sorted by count, descending');
  assert.equal(hh.total, 10_000_000);
});

test('bounds always hold, whatever the stream, and the table never exceeds its capacity', () => {
  const keyArb = fc.oneof(
    fc.integer({ min: 0, max: 60 }),
    fc.constantFrom('x', 'y'),
    fc.constantFrom(Uint8Array.of(1, 2), Uint8Array.of(1, 2, 3)),
  );
  fc.assert(
    fc.property(
      fc.array(fc.tuple(keyArb, fc.integer({ min: 0, max: 50 })), { maxLength: 400 }),
      fc.integer({ min: 1, max: 5 }),
      fc.integer({ min: 1, max: 20 }),
      (stream, k, threshold) => {
        const hh = new HeavyHitters({ k, capacity: 2 * k, threshold, width: 16, depth: 2 });
        const truth = new Map<string, number>();
        const name = (key: unknown) =>
          key instanceof Uint8Array ? `bytes:${key.join(',')}` : `${typeof key}:${String(key)}`;
        for (const [key, by] of stream) {
          hh.add(key, by);
          truth.set(name(key), (truth.get(name(key)) ?? 0) + by);
        }
        const all = hh.top(1000);
        assert.ok(all.length <= 2 * k);
        for (const row of all) {
          const count = truth.get(name(row.key)) ?? 0;
          assert.ok(row.lowerBound <= count && count <= row.upperBound);
          assert.ok(row.upperBound >= threshold);
        }
        assert.ok(hh.top().length <= k);
      },
    ),
  );
});

test('keys that enter on their first event are counted exactly', () => {
  const hh = new HeavyHitters({ k: 3 });
  for (let i = 0; i < 100; i++) hh.add('a');
  hh.add('b', 30);
  hh.add(Uint8Array.of(0xff, 0xfe), 7);
  const reused = Buffer.from([0xff, 0xfe]);
  hh.add(reused, 1);
  reused.fill(0); // the table keeps its own copy of a byte key
  assert.deepEqual(hh.top(), [
    { key: 'a', count: 100, lowerBound: 100, upperBound: 100 },
    { key: 'b', count: 30, lowerBound: 30, upperBound: 30 },
    { key: Uint8Array.of(0xff, 0xfe), count: 8, lowerBound: 8, upperBound: 8 },
  ]);
});

test('while every key fits in the table, every count is exact, however crowded the sketch', () => {
  fc.assert(
    fc.property(
      fc.array(fc.tuple(fc.integer({ min: 0, max: 40 }), fc.integer({ min: 0, max: 9 })), {
        maxLength: 300,
      }),
      fc.boolean(),
      (stream, shared) => {
        // 41 keys, a table of 44, a sketch of 2 x 2 cells: nearly every estimate is far off.
        const hh = new HeavyHitters({ k: 11, width: 2, depth: 2, shared });
        const truth = new Map<number, number>();
        for (const [key, by] of stream) {
          hh.add(key, by);
          truth.set(key, (truth.get(key) ?? 0) + by);
        }
        for (const row of hh.top(100)) {
          const count = truth.get(row.key as number);
          assert.deepEqual(
            [row.count, row.lowerBound, row.upperBound],
            [count, count, count],
            `key ${row.key}`,
          );
        }
        // Every key counted more than 0 is reported.
        const counted = [...truth].filter(([, n]) => n > 0).length;
        assert.ok(hh.top(100).length >= counted);
      },
    ),
  );
});

test('once the table has evicted, a key entering later gets the sketch bound, not 0', () => {
  const hh = new HeavyHitters({ k: 1, capacity: 1, width: 1, depth: 1 });
  hh.add('a', 5); // enters: its 5 are counted exactly, not in the sketch
  hh.add('b', 6); // estimate 6 beats a's 5: a leaves the table and gives its 5 back to the sketch
  hh.add('a', 2); // the sketch's 5 + 2 beats b's 6: a is back, and its base must cover those 5
  const [row] = hh.top();
  assert.equal(row.key, 'a');
  assert.ok(row.lowerBound === 2 && row.upperBound >= 7, JSON.stringify(row));
  assert.equal(hh.sketch.estimate('b'), 11, "b's 6 went back to the sketch when a took its place");
});

test('a key below the threshold stays out of the table', () => {
  const hh = new HeavyHitters({ k: 2, threshold: 10 });
  for (let i = 0; i < 9; i++) hh.add('cold');
  assert.deepEqual(hh.top(), []);
  hh.add('cold');
  assert.equal(hh.top()[0].count, 10);
  assert.equal(hh.top()[0].lowerBound, 1, 'counted exactly only from entry');
});

test('addBytes counts a range of a buffer as the key made of those bytes', () => {
  const hh = new HeavyHitters({ k: 2 });
  const buffer = Buffer.from('xx/api\n/api\n');
  hh.addBytes(buffer, 2, 6, 1);
  hh.addBytes(buffer, 7, 11, 1);
  hh.add(Buffer.from('/api'));
  assert.deepEqual(hh.top(), [
    { key: new Uint8Array(Buffer.from('/api')), count: 3, lowerBound: 3, upperBound: 3 },
  ]);
  // Tracked from its first event: every event went to its exact count, none to the cells.
  assert.equal(hh.sketch.estimate(Buffer.from('/api')), 0);
  assert.equal(hh.total, 3);
});

test('the sketch bounds every event it was given: untracked keys whole, tracked ones with their exact count', () => {
  // Events of a tracked key skip the sketch's cells; an evicted key gives its exact count back.
  // So at every moment estimate >= true count for a key not in the table, and
  // estimate + exact >= true count for one in it.
  const secret = new Uint8Array(16).fill(4);
  fc.assert(
    fc.property(
      fc.array(fc.tuple(fc.integer({ min: 0, max: 30 }), fc.integer({ min: 0, max: 9 })), {
        maxLength: 400,
      }),
      fc.boolean(),
      (stream, conservative) => {
        const hh = new HeavyHitters({
          k: 2,
          capacity: 4,
          width: 8,
          depth: 2,
          secret,
          conservative,
        });
        const truth = new Map<number, number>();
        for (const [key, by] of stream) {
          hh.add(key, by);
          truth.set(key, (truth.get(key) ?? 0) + by);
          const tracked = new Map(hh.top(4).map((row) => [row.key, row.lowerBound]));
          for (const [k, count] of truth) {
            const estimate = hh.sketch.estimate(k) + (tracked.get(k) ?? 0);
            assert.ok(estimate >= count, `key ${k}: ${estimate} < ${count}`);
          }
        }
        assert.equal(
          hh.total,
          stream.reduce((sum, [, by]) => sum + by, 0),
        );
      },
    ),
    { numRuns: 200 },
  );
});

test('options are validated, naming the option', () => {
  for (const [options, type, name] of [
    [{}, TypeError, /k/],
    [{ k: 0 }, RangeError, /k/],
    [{ k: 10, capacity: 5 }, RangeError, /capacity/],
    [{ k: 10, threshold: 0 }, RangeError, /threshold/],
    [{ k: 10, width: -1 }, RangeError, /width/],
  ] as const) {
    assert.throws(
      () => new HeavyHitters(options as never),
      (e: unknown) => e instanceof type && name.test((e as Error).message),
    );
  }
  const hh = new HeavyHitters({ k: 5 });
  assert.equal(hh.capacity, 20);
  assert.equal(hh.threshold, 1);
  assert.equal(hh.sketch.conservative, true);
  assert.throws(() => hh.add('x', -1), RangeError);
  assert.throws(() => hh.add(Number.NaN), TypeError);
  assert.throws(() => hh.top(-1), RangeError);
});

test('the string "1", the number 1, the bigint 1n and the bytes [0x31] are four keys', () => {
  const hh = new HeavyHitters({ k: 4 });
  hh.add('1', 4);
  hh.add(1, 3);
  hh.add(1n, 2);
  hh.add(Uint8Array.of(0x31), 1);
  const line = Buffer.from('x1\n');
  hh.addBytes(line, 1, 2, 10); // the bytes "1": the bytes key, not the string
  assert.deepEqual(
    hh.top().map((row) => [row.key, row.lowerBound]),
    [
      [Uint8Array.of(0x31), 11],
      ['1', 4],
      [1, 3],
      [1n, 2],
    ],
  );
});

test('while the table has room, every key of any kind and length is counted exactly from its first event', () => {
  const keyArb = fc.oneof(
    fc.string({ maxLength: 4 }),
    fc.integer({ min: -3, max: 3 }),
    fc.bigInt({ min: -3n, max: 3n }),
    fc.uint8Array({ maxLength: 4 }),
    fc.uint8Array({ minLength: 200, maxLength: 700 }),
  );
  fc.assert(
    fc.property(
      fc.array(fc.tuple(keyArb, fc.integer({ min: 1, max: 5 }), fc.boolean()), {
        maxLength: 300,
        size: 'max',
      }),
      (stream) => {
        const hh = new HeavyHitters({ k: 300 });
        const truth = new Map<string, number>();
        const name = (key: unknown) =>
          key instanceof Uint8Array ? `bytes:${key.join(',')}` : `${typeof key}:${String(key)}`;
        for (const [key, by, asRange] of stream) {
          if (key instanceof Uint8Array && asRange) {
            const line = Buffer.concat([Buffer.from('>'), key, Buffer.from('\n')]);
            hh.addBytes(line, 1, line.length - 1, by);
          } else {
            hh.add(key, by);
          }
          truth.set(name(key), (truth.get(name(key)) ?? 0) + by);
        }
        const rows = hh.top();
        assert.equal(rows.length, truth.size);
        for (const row of rows) {
          const count = truth.get(name(row.key));
          assert.equal(row.lowerBound, count, `${name(row.key)}`);
          assert.ok(row.upperBound >= row.lowerBound);
        }
      },
    ),
    { numRuns: 50 },
  );
});

test('bounds hold under eviction for byte keys of many lengths, and keys come back whole', () => {
  fc.assert(
    fc.property(
      fc.array(fc.tuple(fc.integer({ min: 0, max: 40 }), fc.integer({ min: 1, max: 9 })), {
        maxLength: 1000,
        size: 'max',
      }),
      fc.integer({ min: 1, max: 6 }),
      (stream, k) => {
        // Key n is n * 13 bytes (0 to 520) of value n: lengths vary, and evictions leave the
        // arena garbage to compact.
        const keyOf = (n: number) => new Uint8Array(n * 13).fill(n);
        const hh = new HeavyHitters({ k, capacity: 2 * k, width: 16, depth: 2 });
        const truth = new Map<number, number>();
        for (const [n, by] of stream) {
          hh.add(keyOf(n), by);
          truth.set(n, (truth.get(n) ?? 0) + by);
        }
        const rows = hh.top(1000);
        assert.ok(rows.length <= 2 * k);
        for (const row of rows) {
          const key = row.key as Uint8Array;
          const n = key.length / 13;
          assert.deepEqual(key, keyOf(n));
          const count = truth.get(n) ?? 0;
          assert.ok(row.lowerBound <= count && count <= row.upperBound);
        }
      },
    ),
    { numRuns: 200 },
  );
});

test('keys returned are copies: changing one changes nothing counted', () => {
  const hh = new HeavyHitters({ k: 2 });
  hh.add(Uint8Array.of(1, 2), 5);
  const [row] = hh.top();
  (row.key as Uint8Array).fill(0);
  assert.deepEqual(hh.top()[0].key, Uint8Array.of(1, 2));
  hh.add(Uint8Array.of(1, 2));
  assert.equal(hh.top()[0].lowerBound, 6);
});

test('addMany equals add, key by key, for int batches and arrays of any keys, on both engines', () => {
  const secret = new Uint8Array(16).fill(9);
  const batch = fc.oneof(
    fc.array(fc.integer({ min: -30, max: 30 }), { maxLength: 2500 }).map((a) => Int32Array.from(a)),
    fc
      .array(fc.integer({ min: 2 ** 31 - 4, max: 2 ** 31 + 4 }), { maxLength: 100 })
      .map((a) => Uint32Array.from(a)),
    fc.array(fc.oneof(fc.integer({ min: 0, max: 9 }), fc.constantFrom('a', 'b', 2.5, 7n)), {
      maxLength: 200,
    }),
  );
  fc.assert(
    fc.property(
      fc.array(batch, { minLength: 1, maxLength: 3 }),
      fc.constantFrom('wasm', 'js'),
      fc.boolean(),
      (batches, engine, shared) => {
        const options = { k: 5, capacity: 8, width: 16, depth: 3, secret, engine, shared };
        const many = new HeavyHitters(options);
        const single = new HeavyHitters({ ...options, engine: 'js' });
        for (const keys of batches) {
          many.addMany(keys);
          for (const key of Array.from(keys as ArrayLike<number | string | bigint>))
            single.add(key);
        }
        assert.deepEqual(many.top(8), single.top(8));
        assert.equal(many.total, single.total);
      },
    ),
    { numRuns: 100 },
  );
  const hh = new HeavyHitters({ k: 2 });
  assert.throws(() => hh.addMany(new Float64Array(2) as never), {
    name: 'TypeError',
    message: /keys/,
  });
  assert.throws(() => hh.addMany([1, 2, {} as never]), { name: 'TypeError', message: /keys\[2\]/ });
  assert.equal(hh.total, 0, 'a rejected batch counts nothing');
});

test('bounds hold at the saturation edge: a key entering with a clamped or saturated estimate', () => {
  const SAT = 2 ** 31 - 1;
  for (const engine of ['wasm', 'js'] as const) {
    // Turned away once (threshold SAT), then entering: its estimate with the event clamps to
    // SAT, and the bound before entry must be what the sketch held, not SAT - by.
    const a = new HeavyHitters({ k: 1, threshold: SAT, engine });
    a.add('x', SAT - 1);
    a.add('x', SAT - 1);
    const [x] = a.top();
    assert.ok(x.lowerBound <= 2 * (SAT - 1) && 2 * (SAT - 1) <= x.upperBound, JSON.stringify(x));
    const b = new HeavyHitters({ k: 1, capacity: 1, engine });
    b.add('a', 10);
    b.add('x', 5);
    b.add('x', SAT - 1);
    const y = b.top().find((row) => row.key === 'x');
    assert.ok(y !== undefined && y.upperBound >= 5 + SAT - 1, JSON.stringify(y));
  }
});
