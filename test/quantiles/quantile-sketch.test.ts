import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { QuantileSketch } from '../../src/quantiles/quantile-sketch.js';

/** Values spread over many orders of magnitude in [min, max], as latencies are. */
const values = (min: number, max: number) =>
  fc.array(fc.double({ min: Math.log(min), max: Math.log(max), noNaN: true }).map(Math.exp), {
    minLength: 1,
    maxLength: 400,
  });

/** The value of rank floor(q (n - 1)) of `sorted`: the quantile the sketch answers. */
const exact = (sorted: number[], q: number) => sorted[Math.floor(q * (sorted.length - 1))];

test('every quantile is within the relative accuracy of the exact one, for values in range', () => {
  fc.assert(
    fc.property(
      fc.constantFrom(0.001, 0.01, 0.05),
      values(0.001, 1e7),
      fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: 1, maxLength: 20 }),
      (alpha, xs, qs) => {
        const sketch = new QuantileSketch({ relativeAccuracy: alpha });
        for (const x of xs) sketch.add(x);
        const sorted = [...xs].sort((a, b) => a - b);
        for (const q of [0, 0.5, 0.9, 0.99, 1, ...qs]) {
          const want = exact(sorted, q);
          const got = sketch.quantile(q) as number;
          assert.ok(
            Math.abs(got - want) <= alpha * want * (1 + 1e-9),
            `q ${q}: ${got} against ${want} (alpha ${alpha})`,
          );
        }
        assert.equal(sketch.count, xs.length);
        assert.equal(sketch.max, sorted[sorted.length - 1]);
      },
    ),
    { numRuns: 300 },
  );
});

test('merge equals the sketch of the union: the same answer for every quantile', () => {
  fc.assert(
    fc.property(values(0.001, 1e7), values(0.001, 1e7), (a, b) => {
      const left = new QuantileSketch();
      const right = new QuantileSketch();
      const union = new QuantileSketch();
      for (const x of a) left.add(x);
      for (const x of b) right.add(x);
      for (const x of [...a, ...b]) union.add(x);
      left.merge(right);
      assert.equal(left.count, union.count);
      assert.equal(left.max, union.max);
      for (let i = 0; i <= 100; i++) assert.equal(left.quantile(i / 100), union.quantile(i / 100));
    }),
  );
});

test('outside the range: below minValue reads as 0 and above maxValue as the largest seen, never lower', () => {
  const sketch = new QuantileSketch({ minValue: 1, maxValue: 1000 });
  for (const x of [0, 0.5, 5000, 70_000]) sketch.add(x);
  assert.equal(sketch.quantile(0), 0);
  assert.equal(sketch.quantile(1), 70_000);
  assert.equal(sketch.quantile(0.7), 70_000);
});

test('memory is fixed by the accuracy and the range, whatever the number of values', () => {
  const sketch = new QuantileSketch();
  const before = sketch.memoryBytes;
  for (let i = 0; i < 100_000; i++) sketch.add((i % 997) + 0.5);
  assert.equal(sketch.memoryBytes, before);
  assert.equal(sketch.count, 100_000);
  sketch.clear();
  assert.equal(sketch.count, 0);
  assert.equal(sketch.quantile(0.5), undefined);
});

test('bad options and values get a TypeError or RangeError naming them', () => {
  assert.throws(() => new QuantileSketch({ relativeAccuracy: 0 }), {
    name: 'RangeError',
    message: /relativeAccuracy/,
  });
  assert.throws(() => new QuantileSketch({ relativeAccuracy: '1' as unknown as number }), {
    name: 'TypeError',
    message: /relativeAccuracy/,
  });
  assert.throws(() => new QuantileSketch({ minValue: -1 }), {
    name: 'RangeError',
    message: /minValue/,
  });
  assert.throws(() => new QuantileSketch({ maxValue: 0.0001 }), {
    name: 'RangeError',
    message: /maxValue/,
  });
  // An accuracy and range an attacker could choose to allocate gigabytes: refused before.
  assert.throws(() => new QuantileSketch({ relativeAccuracy: 1e-9 }), {
    name: 'RangeError',
    message: /buckets/,
  });
  assert.throws(() => new QuantileSketch({ relativeAcuracy: 0.02 } as never), {
    name: 'TypeError',
    message: /relativeAcuracy is not an option \(did you mean relativeAccuracy\?\)/,
  });
  assert.throws(() => new QuantileSketch(null as never), { name: 'TypeError', message: /options/ });
  const sketch = new QuantileSketch();
  for (const bad of [Number.NaN, -1, Number.POSITIVE_INFINITY]) {
    assert.throws(() => sketch.add(bad), { name: 'RangeError', message: /value/ });
  }
  assert.throws(() => sketch.add('3' as unknown as number), {
    name: 'TypeError',
    message: /value/,
  });
  assert.throws(() => sketch.quantile(1.5), { name: 'RangeError', message: /q/ });
  assert.throws(() => sketch.merge(new QuantileSketch({ relativeAccuracy: 0.02 })), {
    name: 'RangeError',
    message: /other/,
  });
  assert.equal(sketch.count, 0, 'nothing refused was counted');
});
