import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { ipKey, type Key, RateLimiter } from '../../src/index.js';
import { gcraGrid } from '../../src/limits/gcra.js';

const secret = new Uint8Array(16).fill(5);

function fakeClock(start = 0) {
  const clock = { time: start, now: () => clock.time };
  return clock;
}

/** Arrivals: [time step, key, cost] triples. */
const arrivals = fc.array(
  fc.tuple(
    fc.integer({ min: 0, max: 300 }),
    fc.integer({ min: 0, max: 30 }),
    fc.integer({ min: 0, max: 3 }),
  ),
  { maxLength: 400 },
);

for (const engine of ['wasm', 'js'] as const) {
  test(`sliding window: in an aligned window a key never passes more than limit, however crowded the sketch (${engine})`, () => {
    fc.assert(
      fc.property(
        arrivals,
        fc.integer({ min: 1, max: 20 }),
        fc.integer({ min: 1, max: 1000 }),
        (events, limit, windowMs) => {
          const clock = fakeClock(1_000_000);
          const limiter = new RateLimiter({
            limit,
            windowMs,
            now: clock.now,
            width: 4,
            depth: 2,
            secret,
            engine,
          });
          const passed = new Map<string, number>();
          for (const [step, key, cost] of events) {
            clock.time += step;
            const decision = limiter.check(key, cost);
            if (!decision.allowed) continue;
            const slot = `${Math.floor(clock.time / windowMs)}/${key}`;
            const total = (passed.get(slot) ?? 0) + cost;
            passed.set(slot, total);
            assert.ok(total <= limit, `${total} passed in one window, limit ${limit}`);
          }
        },
      ),
      { numRuns: 80 },
    );
  });
}

test('sliding window: the decision follows the estimate exactly when keys do not collide; refused requests do not count', () => {
  fc.assert(
    fc.property(
      arrivals,
      fc.integer({ min: 1, max: 10 }),
      fc.integer({ min: 1, max: 1000 }),
      (events, limit, windowMs) => {
        const clock = fakeClock(0);
        const limiter = new RateLimiter({
          limit,
          windowMs,
          now: clock.now,
          width: 1 << 16,
          secret,
        });
        const counted = new Map<string, number>(); // "window/key" -> cost passed
        const get = (window: number, key: number) => counted.get(`${window}/${key}`) ?? 0;
        for (const [step, key, cost] of events) {
          clock.time += step;
          const window = Math.floor(clock.time / windowMs);
          const fraction = (clock.time - window * windowMs) / windowMs;
          const carried = get(window - 1, key) * (1 - fraction);
          const current = get(window, key);
          const expected = current + cost <= Math.floor(limit - carried);
          const decision = limiter.check(key, cost);
          assert.equal(decision.allowed, expected);
          assert.equal(decision.limit, limit);
          const after = current + (expected ? cost : 0);
          assert.equal(decision.remaining, Math.max(0, Math.floor(limit - carried) - after));
          if (expected && cost > 0) counted.set(`${window}/${key}`, after);
        }
      },
    ),
    { numRuns: 100 },
  );
});

test('sliding window: retryAfterMs is when the request would pass, had the key sent nothing more', () => {
  fc.assert(
    fc.property(
      arrivals,
      fc.integer({ min: 1, max: 10 }),
      fc.integer({ min: 1, max: 500 }),
      (events, limit, windowMs) => {
        const clock = fakeClock(0);
        const options = { limit, windowMs, now: clock.now, width: 1 << 12, secret };
        const limiter = new RateLimiter(options);
        for (const [step, key, cost] of events) {
          clock.time += step;
          const decision = limiter.check(key, cost);
          if (decision.allowed) {
            assert.equal(decision.retryAfterMs, 0);
            continue;
          }
          if (cost > limit) {
            assert.equal(decision.retryAfterMs, Number.POSITIVE_INFINITY);
            continue;
          }
          assert.ok(Number.isInteger(decision.retryAfterMs) && decision.retryAfterMs >= 1);
          // Peek a millisecond before the retry time and at it (a cost-0 check counts nothing),
          // and go on from there: the clock only moves forward.
          const saved = clock.time;
          clock.time = saved + decision.retryAfterMs - 1;
          const early = limiter.check(key, 0).remaining >= cost;
          clock.time = saved + decision.retryAfterMs;
          const onTime = limiter.check(key, 0).remaining >= cost;
          assert.ok(onTime, 'still refused at retryAfterMs');
          assert.ok(
            !early || decision.retryAfterMs === 1,
            'would have passed a millisecond earlier',
          );
        }
      },
    ),
    { numRuns: 400 },
  );
});

test('sliding window: resetMs is when the key has its whole quota back', () => {
  const clock = fakeClock(0);
  const limiter = new RateLimiter({ limit: 10, windowMs: 1000, now: clock.now, secret });
  clock.time = 250;
  const first = limiter.check('a', 4);
  assert.equal(first.resetMs, 1750); // the end of the next window, when the 4 have faded out
  clock.time += first.resetMs - 1;
  assert.equal(limiter.check('a', 0).remaining, 9);
  clock.time += 1;
  assert.equal(limiter.check('a', 0).remaining, 10);
  assert.equal(limiter.check('a', 0).resetMs, 0);
});

/** Each key's pass times, and the GCRA bound checked over every interval between two of them. */
function checkGcraBound(passes: Map<number, number[]>, burst: number, intervalMs: number): void {
  for (const [key, times] of passes) {
    for (let i = 0; i < times.length; i++) {
      for (let j = i; j < times.length; j++) {
        const inInterval = j - i + 1;
        const bound = burst + (times[j] - times[i]) / intervalMs;
        assert.ok(
          inInterval <= bound + 1e-9,
          `key ${key}: ${inInterval} passed in ${times[j] - times[i]} ms`,
        );
      }
    }
  }
}

for (const engine of ['wasm', 'js'] as const) {
  test(`gcra: over any interval of length L a key passes at most burst + L / T, many keys in a small sketch (${engine})`, () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 0, max: 200 }), fc.integer({ min: 0, max: 30 })), {
          maxLength: 400,
        }),
        fc.integer({ min: 1, max: 20 }),
        fc.integer({ min: 1, max: 3000 }),
        fc.integer({ min: 1, max: 10 }),
        (events, limit, windowMs, burst) => {
          const clock = fakeClock(1_700_000_000_123);
          const limiter = new RateLimiter({
            limit,
            windowMs,
            algorithm: 'gcra',
            burst,
            now: clock.now,
            width: 4,
            depth: 2,
            secret,
            engine,
          });
          const passes = new Map<number, number[]>();
          for (const [step, key] of events) {
            clock.time += step;
            if (!limiter.check(key).allowed) continue;
            const times = passes.get(key) ?? [];
            times.push(clock.time);
            passes.set(key, times);
          }
          checkGcraBound(passes, burst, windowMs / limit);
        },
      ),
      { numRuns: 80 },
    );
  });
}

test('gcra: a key paced at exactly T always passes, across many eras, whatever its neighbours do', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 50 }),
      fc.integer({ min: 1, max: 40 }),
      fc.integer({ min: 1, max: 5 }),
      (perRequestMs, limit, burst) => {
        const windowMs = perRequestMs * limit; // T = perRequestMs, a whole millisecond
        const clock = fakeClock(1_700_000_000_000 + perRequestMs * 7);
        const limiter = new RateLimiter({
          limit,
          windowMs,
          algorithm: 'gcra',
          burst,
          now: clock.now,
          secret,
        });
        for (let i = 0; i < 300; i++) {
          assert.ok(limiter.check('paced').allowed, `refused at request ${i}`);
          // A noisy neighbour in the same (wide) sketch, refused most of the time.
          limiter.check('noisy');
          limiter.check('noisy');
          clock.time += perRequestMs;
        }
      },
    ),
  );
});

test('gcra: burst at one instant, then retryAfterMs is T, and then one more passes', () => {
  for (const [limit, windowMs, burst] of [
    [10, 1000, 10],
    [3, 1000, 3], // T = 333.33 ms: retryAfterMs is T rounded up to a whole ms
    [100, 60_000, 5],
    [7777, 86_400_000, 7777], // a grid that does not fit exactly: T rounded to the tick
  ]) {
    const clock = fakeClock(1_700_000_000_001);
    const limiter = new RateLimiter({
      limit,
      windowMs,
      algorithm: 'gcra',
      burst,
      now: clock.now,
      secret,
    });
    const intervalMs = windowMs / limit;
    for (let i = 0; i < burst; i++) {
      const decision = limiter.check('k');
      assert.ok(decision.allowed);
      assert.equal(decision.remaining, burst - 1 - i);
    }
    const refused = limiter.check('k');
    assert.equal(refused.allowed, false);
    assert.equal(refused.remaining, 0);
    assert.equal(refused.retryAfterMs, Math.ceil(intervalMs));
    // Exact when T fits the grid exactly; else T is rounded to a tick (at most 1/2000 of T).
    const resetMs = burst * intervalMs;
    if (limit === 7777) assert.ok(Math.abs(refused.resetMs - resetMs) <= resetMs / 2000);
    else assert.equal(refused.resetMs, Math.ceil(resetMs));
    clock.time += refused.retryAfterMs;
    assert.ok(limiter.check('k').allowed);
  }
});

test('gcra: a cost over burst never passes; cost 0 counts nothing', () => {
  const clock = fakeClock(0);
  const limiter = new RateLimiter({
    limit: 10,
    windowMs: 1000,
    algorithm: 'gcra',
    burst: 4,
    now: clock.now,
    secret,
  });
  const decision = limiter.check('k', 5);
  assert.equal(decision.allowed, false);
  assert.equal(decision.retryAfterMs, Number.POSITIVE_INFINITY);
  assert.equal(limiter.check('k', 0).remaining, 4);
  assert.ok(limiter.check('k', 4).allowed);
  assert.equal(limiter.check('k', 0).remaining, 0);
});

test('gcra: a key that waited longer than its burst gets its whole burst back, however many eras passed', () => {
  const clock = fakeClock(1_700_000_000_000);
  const limiter = new RateLimiter({
    limit: 5,
    windowMs: 1000,
    algorithm: 'gcra',
    now: clock.now,
    secret,
  });
  for (const gap of [1000, 1001, 2000, 5000, 3_600_000]) {
    for (let i = 0; i < 5; i++) assert.ok(limiter.check('k').allowed);
    assert.equal(limiter.check('k').allowed, false);
    clock.time += gap;
  }
});

test('bad options get a TypeError or RangeError naming them', () => {
  const now = () => 0;
  const base = { limit: 10, windowMs: 1000, now };
  for (const limit of [0, -1, 1.5, Number.NaN, 2 ** 31]) {
    assert.throws(() => new RateLimiter({ ...base, limit }), {
      name: 'RangeError',
      message: /limit/,
    });
  }
  assert.throws(() => new RateLimiter({ ...base, limit: '10' as never }), {
    name: 'TypeError',
    message: /limit/,
  });
  for (const windowMs of [0, 0.5, Number.POSITIVE_INFINITY]) {
    assert.throws(() => new RateLimiter({ ...base, windowMs }), {
      name: 'RangeError',
      message: /windowMs/,
    });
  }
  for (const burst of [0, 2.5, -3]) {
    assert.throws(() => new RateLimiter({ ...base, algorithm: 'gcra', burst }), {
      name: 'RangeError',
      message: /burst/,
    });
  }
  assert.throws(() => new RateLimiter({ ...base, burst: 3 }), {
    name: 'RangeError',
    message: /burst/,
  });
  assert.throws(() => new RateLimiter({ ...base, algorithm: 'leaky' as never }), {
    name: 'RangeError',
    message: /algorithm/,
  });
  assert.throws(() => new RateLimiter({ ...base, algorithm: 1 as never }), {
    name: 'TypeError',
    message: /algorithm/,
  });
  assert.throws(() => new RateLimiter({ ...base, conservative: true } as never), {
    name: 'TypeError',
    message: /conservative is not an option/,
  });
  // One request a week with a burst of 100: its times cannot fit 32-bit cells.
  assert.throws(
    () =>
      new RateLimiter({ limit: 1, windowMs: 7 * 86_400_000, algorithm: 'gcra', burst: 100, now }),
    { name: 'RangeError', message: /burst/ },
  );
  // 2^31 - 1 a second: T is too fine a fraction of a millisecond for 32-bit time.
  assert.throws(
    () => new RateLimiter({ limit: 2 ** 31 - 1, windowMs: 1000, algorithm: 'gcra', burst: 1, now }),
    { name: 'RangeError', message: /limit/ },
  );
  const limiter = new RateLimiter(base);
  for (const cost of [-1, 1.5, 2 ** 31]) {
    assert.throws(() => limiter.check('k', cost), { name: 'RangeError', message: /cost/ });
  }
  assert.throws(() => limiter.check('k', '1' as never), { name: 'TypeError', message: /cost/ });
  assert.throws(() => limiter.check(null as never), { name: 'TypeError', message: /key/ });
});

test('gcra time grid: T a whole number of ticks, exact when it fits, else within 1/2000 of T; cells below 2^31', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 2 ** 31 - 1 }),
      fc.integer({ min: 1, max: 2 ** 36 }),
      fc.integer({ min: 1, max: 2 ** 31 - 1 }),
      fc.boolean(),
      (limit, windowMs, burstOrLimit, useLimit) => {
        const burst = useLimit ? limit : burstOrLimit;
        let grid: ReturnType<typeof gcraGrid>;
        try {
          grid = gcraGrid(limit, windowMs, burst);
        } catch (error) {
          assert.ok(error instanceof RangeError);
          return;
        }
        const { ticksPerMs, intervalTicks, horizonTicks, eraMs, exact } = grid;
        assert.ok(Number.isInteger(ticksPerMs) && ticksPerMs >= 1);
        assert.ok(Number.isInteger(intervalTicks) && intervalTicks >= 1);
        assert.equal(horizonTicks, burst * intervalTicks);
        assert.ok(horizonTicks <= 2 ** 29);
        assert.ok(eraMs * ticksPerMs >= horizonTicks, 'an era spans a whole horizon');
        assert.ok(eraMs * ticksPerMs + horizonTicks < 2 ** 31, 'cells stay below 2^31');
        const intervalMs = windowMs / limit;
        const gridMs = intervalTicks / ticksPerMs;
        if (exact) assert.equal(intervalTicks * limit, windowMs * ticksPerMs);
        else assert.ok(Math.abs(gridMs - intervalMs) <= intervalMs / 2000);
      },
    ),
    { numRuns: 2000 },
  );
  // Round figures fit exactly.
  for (const [limit, windowMs] of [
    [100, 60_000],
    [3, 1000],
    [5000, 86_400_000],
    [1_000_000, 1000],
  ]) {
    assert.equal(gcraGrid(limit, windowMs, limit).exact, true);
  }
});

/** Keys of every kind the step hashes its own way: numbers, strings, bytes, bigints. */
const stepKey = fc.oneof(
  fc.integer({ min: 0, max: 12 }),
  fc.constantFrom(0.5, -(2 ** 31) - 1, 2 ** 40),
  fc.constantFrom('10.1.2.3', 'a', '', 'é'.repeat(30), 'x'.repeat(9000)),
  fc.constantFrom(Uint8Array.of(1, 2, 3), new Uint8Array(0)),
  fc.constantFrom(7n, -(2n ** 70n)),
  fc.constantFrom('10.1.2.3', '::ffff:10.1.2.3', '2001:db8::1').map((a) => ipKey(a, 56) as Key),
);

for (const algorithm of ['sliding-window', 'gcra'] as const) {
  test(`${algorithm}: the engine's one-call step decides as the JS reference and leaves the same cells, call for call`, () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.tuple(
            fc.integer({ min: 0, max: 400 }),
            stepKey,
            fc.oneof(fc.integer({ min: 0, max: 4 }), fc.constantFrom(0, 1, 50, 2 ** 31 - 1)),
          ),
          { maxLength: 150 },
        ),
        fc.integer({ min: 1, max: 30 }),
        fc.integer({ min: 1, max: 1000 }),
        fc.integer({ min: 1, max: 40 }),
        // Up to 8 rows the engine steps in one call; deeper, it runs the JS rule: both sides.
        fc.integer({ min: 1, max: 10 }),
        (events, limit, windowMs, width, depth) => {
          const clock = fakeClock(1_000_000);
          const [wasm, js] = (['wasm', 'js'] as const).map(
            (engine) =>
              new RateLimiter({
                limit,
                windowMs,
                algorithm,
                now: clock.now,
                width,
                depth,
                secret,
                engine,
              }),
          );
          assert.equal(wasm.engine, 'wasm');
          for (const [step, key, cost] of events) {
            clock.time += step;
            assert.deepEqual(wasm.check(key, cost), js.check(key, cost));
          }
          const cells = (limiter: RateLimiter) =>
            limiter['windows'].sketches.map((sketch) => [...sketch.counters.cells]);
          assert.deepEqual(cells(wasm), cells(js));
        },
      ),
      { numRuns: 150 },
    );
  });
}
