import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { QuantileSketch } from '../../src/quantiles/quantile-sketch.js';
import { SlidingQuantiles } from '../../src/quantiles/sliding-quantiles.js';

test('a snapshot is the sketch of exactly the values of the steps it covers: the last window, at most one step more', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 10 }),
      fc.integer({ min: 1, max: 20_000 }),
      fc.array(
        fc.tuple(
          fc.integer({ min: 0, max: 9_000 }),
          fc.double({ min: 0.01, max: 1e5, noNaN: true }),
        ),
        { minLength: 1, maxLength: 300 },
      ),
      fc.integer({ min: 0, max: 2 ** 40 }),
      (slots, windowMs, steps, start) => {
        let now = start;
        const sliding = new SlidingQuantiles({ windowMs, slots, now: () => now });
        const added: [number, number][] = [];
        for (const [dt, value] of steps) {
          now += dt;
          sliding.add(value);
          added.push([now, value]);
        }
        const stepMs = windowMs / slots;
        const oldest = Math.floor(now / stepMs) - slots;
        const model = new QuantileSketch();
        for (const [at, value] of added) if (Math.floor(at / stepMs) >= oldest) model.add(value);
        const snapshot = sliding.snapshot();
        assert.equal(snapshot.count, model.count);
        assert.equal(snapshot.max, model.max);
        for (let i = 0; i <= 100; i++)
          assert.equal(snapshot.quantile(i / 100), model.quantile(i / 100));
        // What that covers, in time: every value of the last windowMs, none older than a step more.
        const within = added.filter(([at]) => now - at < windowMs).length;
        const withinStep = added.filter(([at]) => now - at < windowMs + stepMs).length;
        assert.ok(snapshot.count >= within && snapshot.count <= withinStep);
      },
    ),
    { numRuns: 300 },
  );
});

test('a minute of 5 s steps: 60 to 65 s of values, a quiet minute empties it, memory stays fixed', () => {
  let now = 1_000_000;
  const sliding = new SlidingQuantiles({ now: () => now, minValue: 0.01, maxValue: 3.6e6 });
  const bytes = sliding.memoryBytes;
  assert.equal(bytes, 13 * new QuantileSketch({ minValue: 0.01, maxValue: 3.6e6 }).memoryBytes);
  for (let i = 0; i < 100_000; i++) sliding.add(1 + (i % 500));
  assert.equal(sliding.memoryBytes, bytes);
  const p99 = sliding.snapshot().quantile(0.99) as number;
  assert.ok(Math.abs(p99 - 495) <= 0.01 * 495, `p99 ${p99}`);
  now += 64_999; // still in the oldest step kept
  assert.equal(sliding.snapshot().count, 100_000);
  now += 1;
  assert.equal(sliding.snapshot().count, 0);
  assert.equal(sliding.snapshot().quantile(0.5), undefined);
});

test('a clock that steps back counts into the step under way; a snapshot is a copy', () => {
  let now = 50_000;
  const sliding = new SlidingQuantiles({ windowMs: 10_000, slots: 2, now: () => now });
  sliding.add(3);
  now -= 40_000;
  sliding.add(7);
  const snapshot = sliding.snapshot();
  assert.equal(snapshot.count, 2);
  snapshot.add(1000);
  assert.equal(sliding.snapshot().count, 2);
  sliding.clear();
  assert.equal(sliding.snapshot().count, 0);
});

test('bad options and values get a TypeError or RangeError naming them', () => {
  assert.throws(() => new SlidingQuantiles({ windowMs: 0 }), {
    name: 'RangeError',
    message: /windowMs/,
  });
  assert.throws(() => new SlidingQuantiles({ slots: 1.5 }), {
    name: 'RangeError',
    message: /slots/,
  });
  assert.throws(() => new SlidingQuantiles({ slots: 1e9 }), {
    name: 'RangeError',
    message: /slots/,
  });
  assert.throws(() => new SlidingQuantiles({ now: 5 as never }), {
    name: 'TypeError',
    message: /now/,
  });
  assert.throws(() => new SlidingQuantiles({ windwMs: 5 } as never), {
    name: 'TypeError',
    message: /did you mean windowMs/,
  });
  assert.throws(() => new SlidingQuantiles({ relativeAccuracy: 2 }), {
    name: 'RangeError',
    message: /relativeAccuracy/,
  });
  let now: unknown = 0;
  const sliding = new SlidingQuantiles({ now: () => now as number });
  assert.throws(() => sliding.add(-1), { name: 'RangeError', message: /value/ });
  now = Number.NaN;
  assert.throws(() => sliding.add(1), { name: 'TypeError', message: /now\(\)/ });
});
