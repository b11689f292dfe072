import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { CountMinSketch, SATURATED } from '../../src/index.js';

const secret = new Uint8Array(16).fill(7);

/** Updates as (key, amount) pairs; a negative amount is a decrement. */
type Update = [key: number | string, amount: number];

const keyArb = fc.oneof(fc.integer({ min: 0, max: 40 }), fc.constantFrom('a', 'b', 'c', 'd'));
const streamArb = fc.array(fc.tuple(keyArb, fc.integer({ min: 0, max: 1000 })), { maxLength: 300 });

function exact(updates: Update[]): Map<number | string, number> {
  const counts = new Map<number | string, number>();
  for (const [key, amount] of updates) counts.set(key, (counts.get(key) ?? 0) + amount);
  return counts;
}

function feed(sketch: CountMinSketch, updates: Update[]): CountMinSketch {
  for (const [key, amount] of updates) {
    if (amount >= 0) sketch.increment(key, amount);
    else sketch.decrement(key, -amount);
  }
  return sketch;
}

/** Turns some increments into later decrements, never taking a key below zero (strict turnstile). */
function withDecrements(updates: Update[], every: number): Update[] {
  const out: Update[] = [];
  const counts = new Map<number | string, number>();
  updates.forEach(([key, amount], i) => {
    out.push([key, amount]);
    const count = (counts.get(key) ?? 0) + amount;
    counts.set(key, count);
    if (i % every === 0 && count > 0) {
      const back = Math.ceil(count / 2);
      out.push([key, -back]);
      counts.set(key, count - back);
    }
  });
  return out;
}

test('never underestimates a key (plain, conservative, with decrements), and increment returns the estimate', () => {
  fc.assert(
    fc.property(
      streamArb,
      fc.integer({ min: 1, max: 64 }),
      fc.integer({ min: 1, max: 5 }),
      (stream, width, depth) => {
        const turnstile = withDecrements(stream, 3);
        for (const [sketch, updates] of [
          [new CountMinSketch({ width, depth, secret }), turnstile],
          [new CountMinSketch({ width, depth, secret, conservative: true }), stream],
        ] as const) {
          for (const [key, amount] of updates) {
            const after =
              amount >= 0 ? sketch.increment(key, amount) : sketch.decrement(key, -amount);
            assert.equal(after, sketch.estimate(key));
          }
          for (const [key, count] of exact(updates)) assert.ok(sketch.estimate(key) >= count);
          assert.equal(
            sketch.total,
            updates.reduce((sum, [, amount]) => sum + amount, 0),
          );
        }
      },
    ),
  );
});

test('merging plain sketches equals the sketch of the concatenated streams', () => {
  fc.assert(
    fc.property(streamArb, streamArb, (left, right) => {
      const merged = feed(
        new CountMinSketch({ width: 32, depth: 3, secret }),
        withDecrements(left, 4),
      );
      merged.merge(feed(new CountMinSketch({ width: 32, depth: 3, secret }), right));
      const whole = feed(new CountMinSketch({ width: 32, depth: 3, secret }), [
        ...withDecrements(left, 4),
        ...right,
      ]);
      assert.deepEqual(merged.toBytes(), whole.toBytes());
      assert.equal(merged.total, whole.total);
    }),
  );
});

test('conservative update never exceeds plain update, key by key', () => {
  fc.assert(
    fc.property(streamArb, (stream) => {
      const plain = feed(new CountMinSketch({ width: 16, depth: 3, secret }), stream);
      const conservative = feed(
        new CountMinSketch({ width: 16, depth: 3, secret, conservative: true }),
        stream,
      );
      for (const key of exact(stream).keys())
        assert.ok(conservative.estimate(key) <= plain.estimate(key));
    }),
  );
});

test('merged conservative sketches lie between the truth and the plain sketch of both streams', () => {
  fc.assert(
    fc.property(streamArb, streamArb, (left, right) => {
      const options = { width: 16, depth: 3, secret, conservative: true };
      const merged = feed(new CountMinSketch(options), left).merge(
        feed(new CountMinSketch(options), right),
      );
      const plain = feed(new CountMinSketch({ ...options, conservative: false }), [
        ...left,
        ...right,
      ]);
      for (const [key, count] of exact([...left, ...right])) {
        assert.ok(merged.estimate(key) >= count);
        assert.ok(merged.estimate(key) <= plain.estimate(key));
      }
    }),
  );
});

test('round trip through bytes is the identity', () => {
  fc.assert(
    fc.property(streamArb, fc.boolean(), (stream, conservative) => {
      const sketch = feed(
        new CountMinSketch({ width: 24, depth: 2, secret, conservative }),
        stream,
      );
      const bytes = sketch.toBytes();
      const copy = CountMinSketch.fromBytes(bytes, { secret });
      assert.deepEqual(copy.toBytes(), bytes);
      assert.equal(copy.total, sketch.total);
      assert.equal(copy.conservative, conservative);
      for (const key of exact(stream).keys())
        assert.equal(copy.estimate(key), sketch.estimate(key));
    }),
  );
});

test('counters saturate at 2^31 - 1 and never wrap, not even after a decrement', () => {
  fc.assert(
    fc.property(
      fc.array(fc.integer({ min: 0, max: SATURATED }), { minLength: 1, maxLength: 8 }),
      fc.boolean(),
      (amounts, conservative) => {
        const sketch = new CountMinSketch({ width: 4, depth: 2, secret, conservative });
        let truth = 0;
        for (const amount of amounts) {
          truth += amount;
          const after = sketch.increment('hot', amount);
          assert.equal(after, Math.min(truth, SATURATED));
        }
        assert.equal(sketch.saturated, truth >= SATURATED);
        assert.equal(sketch.total, truth);
        if (truth >= SATURATED && !conservative) {
          assert.equal(
            sketch.decrement('hot', 1000),
            SATURATED,
            'sticky: a decrement cannot pull it below the truth',
          );
        }
      },
    ),
  );
});

test('a sketch saturated by merge stays saturated', () => {
  const a = new CountMinSketch({ width: 4, depth: 2, secret });
  const b = new CountMinSketch({ width: 4, depth: 2, secret });
  a.increment('k', SATURATED - 5);
  b.increment('k', 10);
  assert.equal(a.merge(b).estimate('k'), SATURATED);
  assert.ok(a.saturated);
  const restored = CountMinSketch.fromBytes(a.toBytes(), { secret });
  assert.ok(restored.saturated);
  a.clear();
  assert.equal(a.saturated, false);
  assert.equal(a.estimate('k'), 0);
  assert.equal(a.total, 0);
});

test('estimates stay within errorBound for all but about delta of the keys', () => {
  // 20k keys, Zipf-like counts; width 272 gives epsilon = 0.01, depth 3 gives delta = e^-3 ~ 5%.
  const sketch = new CountMinSketch({ epsilon: 0.01, delta: 0.05 });
  assert.equal(sketch.width, 272);
  assert.equal(sketch.depth, 3);
  const truth = new Map<number, number>();
  for (let key = 1; key <= 20_000; key++) {
    const count = Math.ceil(1000 / key);
    truth.set(key, count);
    sketch.increment(key, count);
  }
  let over = 0;
  for (const [key, count] of truth) {
    const error = sketch.estimate(key) - count;
    assert.ok(error >= 0);
    if (error > sketch.errorBound) over++;
  }
  assert.ok(over / truth.size <= sketch.delta, `${over} of ${truth.size} keys beyond the bound`);
});

test('reports its size, guarantee and secret', () => {
  const sketch = new CountMinSketch({ width: 1000, depth: 5, secret });
  // The engine's memory is allocated in 64 KiB pages: the cells and 16 KiB of state, rounded up.
  assert.equal(sketch.engine, 'wasm');
  assert.equal(sketch.memoryBytes, 65536);
  assert.equal(new CountMinSketch({ width: 20_000, depth: 5, secret }).memoryBytes, 7 * 65536);
  assert.equal(new CountMinSketch({ width: 1000, depth: 5, engine: 'js' }).memoryBytes, 20_000);
  assert.equal(sketch.epsilon, Math.E / 1000);
  assert.equal(sketch.delta, Math.exp(-5));
  assert.equal(sketch.errorBound, 0);
  sketch.increment('x', 500);
  assert.equal(sketch.errorBound, (Math.E / 1000) * 500);
  const copy = sketch.secret;
  assert.deepEqual(copy, secret);
  copy[0] ^= 1;
  assert.deepEqual(sketch.secret, secret, 'secret returns a copy');
  const defaults = new CountMinSketch();
  assert.equal(defaults.width, 16384);
  assert.equal(defaults.depth, 4);
  assert.equal(defaults.secret.length, 16);
  assert.notDeepEqual(
    defaults.secret,
    new CountMinSketch().secret,
    'a fresh random secret per instance',
  );
});

test('a sketch made with the default secret can be persisted and reloaded', () => {
  const sketch = new CountMinSketch();
  sketch.increment('persist-me', 42);
  const reloaded = CountMinSketch.fromBytes(sketch.toBytes(), { secret: sketch.secret });
  assert.equal(reloaded.estimate('persist-me'), 42);
});

test('merge refuses sketches it cannot combine', () => {
  const base = new CountMinSketch({ width: 8, depth: 2, secret });
  const other = new Uint8Array(16).fill(8);
  for (const bad of [
    new CountMinSketch({ width: 9, depth: 2, secret }),
    new CountMinSketch({ width: 8, depth: 3, secret }),
    new CountMinSketch({ width: 8, depth: 2, secret: other }),
    new CountMinSketch({ width: 8, depth: 2, secret, conservative: true }),
  ]) {
    assert.throws(() => base.merge(bad), RangeError);
  }
  assert.throws(() => base.merge({} as never), TypeError);
});

test('decrement is refused on a conservative sketch', () => {
  const sketch = new CountMinSketch({ conservative: true });
  assert.throws(() => sketch.decrement('k'), TypeError);
});

test('by must be an integer from 0 to 2^31 - 1', () => {
  const sketch = new CountMinSketch({ width: 8, depth: 1 });
  for (const bad of [-1, 1.5, 2 ** 31, Number.NaN, Number.POSITIVE_INFINITY]) {
    assert.throws(
      () => sketch.increment('k', bad),
      (e: unknown) => e instanceof RangeError && /by/.test(e.message),
    );
    assert.throws(
      () => sketch.decrement('k', bad),
      (e: unknown) => e instanceof RangeError && /by/.test(e.message),
    );
  }
  for (const bad of ['1', 1n, null, {}]) {
    assert.throws(
      () => sketch.increment('k', bad as never),
      (e: unknown) => e instanceof TypeError && /by/.test(e.message),
    );
  }
  assert.equal(sketch.increment('k', 0), 0);
  assert.equal(sketch.increment('k', SATURATED), SATURATED);
  assert.equal(sketch.total, SATURATED);
});

test('options are validated, naming the option', () => {
  const cases: [object, typeof RangeError | typeof TypeError, RegExp][] = [
    [{ width: 0 }, RangeError, /width/],
    [{ depth: 0 }, RangeError, /depth/],
    [{ width: 1.5 }, RangeError, /width/],
    [{ depth: 2.5 }, RangeError, /depth/],
    [{ width: '8' }, TypeError, /width/],
    [{ epsilon: 0 }, RangeError, /epsilon/],
    [{ epsilon: 1 }, RangeError, /epsilon/],
    [{ delta: 0 }, RangeError, /delta/],
    [{ delta: 1.5 }, RangeError, /delta/],
    [{ delta: Number.NaN }, RangeError, /delta/],
    [{ width: 100, epsilon: 0.01 }, RangeError, /width and epsilon/],
    [{ depth: 4, delta: 0.01 }, RangeError, /depth and delta/],
    [{ width: 2 ** 27, depth: 3 }, RangeError, /width/],
    [{ epsilon: 1e-9 }, RangeError, /epsilon/],
    [{ secret: new Uint8Array(15) }, RangeError, /secret/],
    [{ secret: 'sixteen-byte-key' }, TypeError, /secret/],
    [{ conservative: 'yes' }, TypeError, /conservative/],
  ];
  for (const [options, type, message] of cases) {
    assert.throws(
      () => new CountMinSketch(options as never),
      (e: unknown) => e instanceof type && message.test((e as Error).message),
      JSON.stringify(options),
    );
  }
  assert.throws(
    () => new CountMinSketch({ width: 2 ** 26, depth: 5 }),
    RangeError,
    'over 2^28 counters',
  );
});
