import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { Rate } from '../../src/index.js';

const secret = new Uint8Array(16).fill(3);

/** A clock the test moves. */
function fakeClock(start = 0) {
  const clock = { time: start, now: () => clock.time };
  return clock;
}

/** An event stream over time: [time step, key, events] triples, times non-decreasing. */
const stream = fc.array(
  fc.tuple(fc.integer({ min: 0, max: 400 }), fc.integer({ min: 0, max: 40 }), fc.nat(5)),
  { maxLength: 300 },
);

for (const engine of ['wasm', 'js'] as const) {
  test(`observe and components never read below the true counts of the current and previous windows (${engine})`, () => {
    fc.assert(
      fc.property(
        stream,
        fc.integer({ min: 1, max: 1000 }),
        fc.boolean(),
        (events, windowMs, conservative) => {
          const clock = fakeClock(1_700_000_000_000);
          // A small sketch, so that keys collide: estimates may be high, never low.
          const rate = new Rate({
            windowMs,
            now: clock.now,
            width: 8,
            depth: 2,
            secret,
            engine,
            conservative,
          });
          const truth = new Map<string, number>(); // "window/key" -> events
          const count = (window: number, key: number) => truth.get(`${window}/${key}`) ?? 0;
          for (const [step, key, n] of events) {
            clock.time += step;
            const window = Math.floor(clock.time / windowMs);
            truth.set(`${window}/${key}`, count(window, key) + n);
            const after = rate.observe(`k${key}`, n);
            assert.ok(after >= count(window, key), 'observe below the true count');
            const probe = (key * 7) % 41;
            const parts = rate.components(`k${probe}`);
            assert.ok(parts.current >= count(window, probe));
            assert.ok(parts.previous >= count(window - 1, probe));
            assert.equal(parts.fraction, (clock.time - window * windowMs) / windowMs);
            assert.equal(rate.peek(`k${probe}`), parts.current);
          }
        },
      ),
      { numRuns: 60 },
    );
  });
}

test('with room for every key, the counts are exact: rolling to the next window loses nothing and counts nothing twice', () => {
  fc.assert(
    fc.property(stream, fc.integer({ min: 1, max: 500 }), (events, windowMs) => {
      const clock = fakeClock(5);
      const rate = new Rate({ windowMs, now: clock.now, width: 1 << 16, depth: 4, secret });
      const truth = new Map<string, number>();
      const count = (window: number, key: number) => truth.get(`${window}/${key}`) ?? 0;
      for (const [step, key, n] of events) {
        clock.time += step;
        const window = Math.floor(clock.time / windowMs);
        truth.set(`${window}/${key}`, count(window, key) + n);
        rate.observe(key, n);
        for (const probe of [key, 0, 40]) {
          const parts = rate.components(probe);
          assert.equal(parts.current, count(window, probe));
          assert.equal(parts.previous, count(window - 1, probe));
        }
      }
    }),
    { numRuns: 100 },
  );
});

test('after two idle windows every figure is 0', () => {
  fc.assert(
    fc.property(stream, fc.integer({ min: 1, max: 500 }), fc.nat(3), (events, windowMs, extra) => {
      const clock = fakeClock();
      const rate = new Rate({ windowMs, now: clock.now, width: 16, depth: 2, secret });
      for (const [step, key, n] of events) {
        clock.time += step;
        rate.observe(key, n);
      }
      // The start of the window two after the last event's, or later.
      clock.time = (Math.floor(clock.time / windowMs) + 2 + extra) * windowMs;
      for (let key = 0; key <= 40; key++) {
        assert.deepEqual(rate.components(key), {
          previous: 0,
          current: 0,
          fraction: 0,
          windowMs,
        });
        assert.equal(rate.rate(key), 0);
        assert.equal(rate.peek(key), 0);
      }
    }),
  );
});

test('rate is the sliding estimate in events per second', () => {
  const clock = fakeClock(10_000);
  const rate = new Rate({ windowMs: 2000, now: clock.now, secret });
  rate.observe('a', 100);
  clock.time = 12_500; // a quarter into the next window
  rate.observe('a', 10);
  // (100 * 0.75 + 10) / 2 s
  assert.equal(rate.rate('a'), 42.5);
  assert.deepEqual(rate.components('a'), {
    previous: 100,
    current: 10,
    fraction: 0.25,
    windowMs: 2000,
  });
});

test('windows are aligned to the clock, not to the first event', () => {
  const clock = fakeClock(1999);
  const rate = new Rate({ windowMs: 1000, now: clock.now, secret });
  rate.observe('a');
  clock.time = 2000; // one millisecond later, a new window
  assert.equal(rate.peek('a'), 0);
  assert.equal(rate.components('a').previous, 1);
});

test('a clock that steps back stands still: nothing counted is dropped', () => {
  const clock = fakeClock(5500);
  const rate = new Rate({ windowMs: 1000, now: clock.now, secret });
  rate.observe('a', 3);
  clock.time = 3000; // NTP stepped the clock two windows back
  assert.equal(rate.observe('a'), 4);
  assert.equal(rate.components('a').fraction, 0);
  clock.time = 5600;
  assert.equal(rate.peek('a'), 4);
});

test('windows of 1 ms: no division by zero, no NaN', () => {
  const clock = fakeClock(0);
  const rate = new Rate({ windowMs: 1, now: clock.now, secret });
  assert.equal(rate.rate('a'), 0);
  rate.observe('a', 5);
  assert.equal(rate.rate('a'), 5000);
  clock.time = 1;
  assert.equal(rate.rate('a'), 5000);
  clock.time = 2;
  assert.equal(rate.rate('a'), 0);
});

test('memory is three sketches, whatever the number of keys', () => {
  const clock = fakeClock();
  const rate = new Rate({ windowMs: 1000, now: clock.now, width: 1024, depth: 4, engine: 'js' });
  assert.equal(rate.memoryBytes, 3 * 1024 * 4 * 4);
  for (let i = 0; i < 100_000; i++) rate.observe(`client-${i}`);
  assert.equal(rate.memoryBytes, 3 * 1024 * 4 * 4);
});

test('bad options and arguments get a TypeError or RangeError naming them', () => {
  const now = () => 0;
  for (const windowMs of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53]) {
    assert.throws(() => new Rate({ windowMs, now }), { name: 'RangeError', message: /windowMs/ });
  }
  assert.throws(() => new Rate({ windowMs: '1000' as unknown as number }), {
    name: 'TypeError',
    message: /windowMs/,
  });
  assert.throws(() => new Rate({} as never), { name: 'TypeError', message: /windowMs/ });
  assert.throws(() => new Rate({ windowMs: 1000, now: 5 as never }), {
    name: 'TypeError',
    message: /now/,
  });
  assert.throws(() => new Rate({ windowMs: 1000, windowMS: 5 } as never), {
    name: 'TypeError',
    message: /windowMS is not an option \(did you mean windowMs\?\)/,
  });
  const rate = new Rate({ windowMs: 1000, now });
  assert.throws(() => rate.observe('a', -1), { name: 'RangeError', message: /events/ });
  assert.throws(() => rate.observe('a', 0.5), { name: 'RangeError', message: /events/ });
  assert.throws(() => rate.observe({} as never), { name: 'TypeError', message: /key/ });
  const broken = new Rate({ windowMs: 1000, now: () => Number.NaN });
  assert.throws(() => broken.observe('a'), { name: 'TypeError', message: /now\(\)/ });
  assert.throws(() => rate.handle, { name: 'TypeError', message: /shared/ });
});
