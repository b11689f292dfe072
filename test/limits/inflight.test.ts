import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { Inflight, type InflightGuard } from '../../src/index.js';

const secret = new Uint8Array(16).fill(11);

const steps = fc.array(
  fc.oneof(
    fc.record({
      op: fc.constant('acquire' as const),
      key: fc.nat(8),
      n: fc.integer({ min: 1, max: 4 }),
    }),
    fc.record({
      op: fc.constant('try' as const),
      key: fc.nat(8),
      limit: fc.integer({ min: 1, max: 6 }),
      n: fc.integer({ min: 1, max: 4 }),
    }),
    fc.record({ op: fc.constant('release' as const), index: fc.nat() }),
    fc.record({ op: fc.constant('dispose' as const), index: fc.nat() }),
  ),
  { maxLength: 200 },
);

for (const engine of ['wasm', 'js'] as const) {
  test(`guards balance to zero after any interleaving of acquire, tryAcquire, release, double release and dispose (${engine})`, () => {
    fc.assert(
      fc.property(steps, fc.boolean(), (script, small) => {
        const inflight = new Inflight({ width: small ? 4 : 4096, depth: 2, secret, engine });
        const guards: InflightGuard[] = [];
        const held = new Map<number, number>(); // key -> amount the live guards hold
        const keyOf = new Map<InflightGuard, [number, number]>();
        for (const step of script) {
          if (step.op === 'acquire' || step.op === 'try') {
            const guard =
              step.op === 'acquire'
                ? inflight.acquire(step.key, step.n)
                : inflight.tryAcquire(step.key, step.limit, step.n);
            const before = held.get(step.key) ?? 0;
            if (guard === null) {
              // Refused: nothing held, and refused only if the estimate was over the limit.
              assert.equal(step.op, 'try');
              if (step.op === 'try') assert.ok(inflight.estimate(step.key) + step.n > step.limit);
              continue;
            }
            assert.ok(guard.count >= before + step.n, 'the count is below what is held');
            if (step.op === 'try') assert.ok(guard.count <= step.limit);
            held.set(step.key, before + step.n);
            keyOf.set(guard, [step.key, step.n]);
            guards.push(guard);
          } else if (guards.length > 0) {
            const guard = guards[step.index % guards.length];
            const wasHeld = guard.held;
            if (step.op === 'release') guard.release();
            else guard[Symbol.dispose]();
            assert.equal(guard.held, false);
            if (wasHeld) {
              const [key, n] = keyOf.get(guard) ?? [0, 0];
              held.set(key, (held.get(key) ?? 0) - n);
            }
          }
          for (const [key, amount] of held) assert.ok(inflight.estimate(key) >= amount);
        }
        for (const guard of guards) guard.release();
        for (let key = 0; key <= 8; key++) assert.equal(inflight.estimate(key), 0);
        assert.equal(inflight.sketch.total, 0);
      }),
      { numRuns: 150 },
    );
  });
}

test('tryAcquire lets at most limit holders in, and lets one in again after a release', () => {
  const inflight = new Inflight({ secret });
  const guards = [1, 2, 3].map(() => inflight.tryAcquire('origin', 3));
  assert.ok(guards.every((guard) => guard !== null));
  assert.deepEqual(
    guards.map((guard) => guard?.count),
    [1, 2, 3],
  );
  assert.equal(inflight.tryAcquire('origin', 3), null);
  assert.equal(inflight.tryAcquire('origin', 5, 3), null); // 3 + 3 > 5: nothing held
  assert.equal(inflight.estimate('origin'), 3);
  guards[1]?.release();
  const again = inflight.tryAcquire('origin', 3);
  assert.equal(again?.count, 3);
});

test('using releases the guard at the end of the block', () => {
  const inflight = new Inflight({ secret });
  {
    const guard = inflight.acquire('k', 2);
    try {
      assert.equal(inflight.estimate('k'), 2);
    } finally {
      guard[Symbol.dispose]();
    }
  }
  assert.equal(inflight.estimate('k'), 0);
});

test('a guard collected without release: given back with reclaimLeaked (and counted in leaked), held for good without', () => {
  const script = fileURLToPath(new URL('../helpers/leaked-guard.js', import.meta.url));
  const child = spawnSync(process.execPath, ['--expose-gc', script], { encoding: 'utf8' });
  assert.equal(child.status, 0, child.stderr);
  assert.deepEqual(JSON.parse(child.stdout), [
    { reclaimLeaked: true, before: 3, after: 1, leaked: 2 },
    { reclaimLeaked: false, before: 3, after: 3, leaked: 0 },
  ]);
});

test('bad arguments get a TypeError or RangeError naming them', () => {
  const inflight = new Inflight({ secret });
  for (const n of [0, -1, 1.5, 2 ** 31]) {
    assert.throws(() => inflight.acquire('k', n), { name: 'RangeError', message: /\bn\b/ });
    assert.throws(() => inflight.tryAcquire('k', 5, n), { name: 'RangeError', message: /\bn\b/ });
  }
  for (const limit of [0, -2, 0.5]) {
    assert.throws(() => inflight.tryAcquire('k', limit), { name: 'RangeError', message: /limit/ });
  }
  assert.throws(() => inflight.tryAcquire('k', '3' as never), {
    name: 'TypeError',
    message: /limit/,
  });
  assert.throws(() => inflight.acquire(undefined as never), { name: 'TypeError', message: /key/ });
  assert.throws(() => new Inflight({ conservative: true } as never), {
    name: 'TypeError',
    message: /conservative is not an option/,
  });
  assert.throws(() => new Inflight(null as never), { name: 'TypeError', message: /options/ });
  assert.throws(() => new Inflight({ reclaimLeaked: 1 } as never), {
    name: 'TypeError',
    message: /reclaimLeaked/,
  });
  assert.equal(inflight.estimate('k'), 0, 'a refused call held nothing');
});
