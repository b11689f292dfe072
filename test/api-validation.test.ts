/**
 * The public surface refuses what it cannot honour, before it touches anything: a rejected call
 * leaves every observable the same, and an options object with a name it does not know is a
 * TypeError that names it.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { CountMinSketch, HeavyHitters } from '../src/index.js';

const SECRET = new Uint8Array(16).fill(7);

const validKey = fc.oneof(
  fc.integer({ min: 0, max: 30 }),
  fc.constantFrom('a', 'b', 'c'),
  fc.constantFrom(Uint8Array.of(1), Uint8Array.of(2, 3)),
);
const badKey = fc.constantFrom<unknown>(
  Number.NaN,
  Number.POSITIVE_INFINITY,
  undefined,
  null,
  {},
  [1],
  Symbol('k'),
);
const badAmount = fc.constantFrom<unknown>(-1, 1.5, 2 ** 31, Number.NaN, '1', 1n);

/** A call that must be refused: a bad key with a good amount, or the other way round. */
const rejected = fc.oneof(
  fc.record({ key: badKey, by: fc.integer({ min: 0, max: 9 }) }),
  fc.record({ key: validKey, by: badAmount }),
);
const step = fc.oneof(
  fc.record({ ok: fc.constant(true), key: validKey, by: fc.integer({ min: 0, max: 9 }) }),
  rejected.map((call) => ({ ok: false, ...call })),
);

/** A clear error: TypeError for a wrong kind of value, RangeError for one out of range. */
const refused = (e: unknown) => e instanceof TypeError || e instanceof RangeError;

/** Everything a user can read off shared heavy hitters and the part they combine. */
function observe(main: HeavyHitters, part: HeavyHitters): string {
  return JSON.stringify(
    {
      top: main.top(100),
      partTable: { ...part.table(), part: '' },
      mainTable: { ...main.table(), part: '' },
      total: main.total,
      bytes: Buffer.from(main.sketch.toBytes()).toString('hex'),
    },
    (_, value) => (typeof value === 'bigint' ? `${value}n` : value),
  );
}

test('a rejected HeavyHitters.add changes nothing: not the table, the sketch, the total nor combined bounds', () => {
  fc.assert(
    fc.property(fc.array(step, { maxLength: 60 }), (steps) => {
      const main = new HeavyHitters({ k: 3, width: 32, depth: 2, shared: true, secret: SECRET });
      const part = HeavyHitters.attach(main.handle);
      for (const { ok, key, by } of steps) {
        if (ok) {
          part.add(key as never, by as number);
          continue;
        }
        const before = observe(main, part);
        assert.throws(() => part.add(key as never, by as never), refused);
        assert.throws(() => main.add(key as never, by as never), refused);
        assert.equal(observe(main, part), before);
      }
      // Combined bounds are what the issue saw move: [50, 50] became [50, 58].
      main.combine(part.table());
      for (const row of main.top(100)) assert.ok(row.lowerBound <= row.upperBound);
    }),
  );
});

test('combined bounds stay exact after a caught add(NaN, 5) on a part', () => {
  const main = new HeavyHitters({ k: 5, shared: true });
  const part = HeavyHitters.attach(main.handle);
  for (let i = 0; i < 50; i++) part.add('key');
  assert.throws(() => part.add(Number.NaN, 5), TypeError);
  main.combine(part.table());
  assert.deepEqual(main.top(1), [{ key: 'key', count: 50, lowerBound: 50, upperBound: 50 }]);
});

test('a rejected increment, decrement or estimate leaves the sketch as it was', () => {
  fc.assert(
    fc.property(fc.array(step, { maxLength: 60 }), fc.boolean(), (steps, shared) => {
      const sketch = new CountMinSketch({ width: 16, depth: 3, secret: SECRET, shared });
      for (const { ok, key, by } of steps) {
        if (ok) {
          sketch.increment(key as never, by as number);
          continue;
        }
        const before = Buffer.from(sketch.toBytes()).toString('hex');
        assert.throws(() => sketch.increment(key as never, by as never), refused);
        assert.throws(() => sketch.decrement(key as never, by as never), refused);
        assert.equal(Buffer.from(sketch.toBytes()).toString('hex'), before);
      }
    }),
  );
});

test('an unknown option name is a TypeError naming it, with the closest known name', () => {
  const cases: [() => unknown, RegExp][] = [
    [() => new CountMinSketch({ widht: 10 } as never), /options\.widht .*did you mean width\?/],
    [() => new CountMinSketch({ Depth: 2 } as never), /options\.Depth .*did you mean depth\?/],
    [() => new CountMinSketch({ sharde: true } as never), /options\.sharde .*shared/],
    [() => new CountMinSketch({ zzzzzzzzzz: 1 } as never), /options\.zzzzzzzzzz is not an option;/],
    [() => new HeavyHitters({ k: 3, capacty: 9 } as never), /options\.capacty .*capacity/],
    [() => new HeavyHitters({ k: 3, widht: 9 } as never), /options\.widht .*width/],
    [() => new HeavyHitters({ k: 3, treshold: 2 } as never), /options\.treshold .*threshold/],
    [
      () => CountMinSketch.fromBytes(new CountMinSketch().toBytes(), { secert: SECRET } as never),
      /options\.secert .*secret/,
    ],
  ];
  for (const [make, message] of cases)
    assert.throws(
      make,
      (e: unknown) => e instanceof TypeError && message.test((e as Error).message),
      String(message),
    );
  // Every documented option is still accepted.
  new CountMinSketch({ width: 8, depth: 2, conservative: true, secret: SECRET, shared: true });
  new CountMinSketch({ epsilon: 0.1, delta: 0.1 });
  new HeavyHitters({ k: 2, capacity: 4, threshold: 2, epsilon: 0.1, delta: 0.1, shared: true });
});

test('a sketch too large names the option at fault and its value', () => {
  const cases: [object, RegExp][] = [
    [
      { depth: 2 ** 28 },
      /^RangeError: depth 268435456 too large: .*with width 16384 \(the default\)$/,
    ],
    [{ delta: 5e-324 }, /^RangeError: delta 5e-324 too small \(depth Infinity\): /],
    [
      { epsilon: 1e-9 },
      /^RangeError: epsilon 1e-9 too small \(width 2718281829\): .*depth 4 \(the default\)$/,
    ],
    [
      { width: 2 ** 27, depth: 3 },
      /^RangeError: width 134217728 too large and depth 3 too large: /,
    ],
    [{ width: 2 ** 27 }, /^RangeError: width 134217728 too large: .*with depth 4 \(the default\)$/],
  ];
  for (const [options, message] of cases) {
    assert.throws(
      () => new CountMinSketch(options),
      (e: unknown) => {
        assert.match(String(e), message);
        assert.doesNotMatch(String(e), /undefined/);
        return true;
      },
    );
  }
});
