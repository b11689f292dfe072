import assert from 'node:assert/strict';
import { once } from 'node:events';
import { test } from 'node:test';
import fc from 'fast-check';
import {
  RedisCountMinSketch,
  RedisInflight,
  type RedisInflightGuard,
} from '../../src/redis/index.js';
import { fleetChild, redisForFile } from '../helpers/redis.js';

const secret = new Uint8Array(16).fill(51);
const fixture = redisForFile(3);
let names = 0;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

test('tryAcquire from three processes at once never lets more than limit in; released, the count is 0', async () => {
  const name = `gate-${process.pid}`;
  const fleet = fixture.clients.map(
    (redis) => new RedisInflight({ redis, name, secret, width: 32, depth: 3 }),
  );
  const limit = 7;
  let holding = 0;
  let most = 0;
  const worker = async (inflight: RedisInflight, i: number) => {
    for (let round = 0; round < 40; round++) {
      const guard = await inflight.tryAcquire('origin', limit, 1 + ((round + i) % 2));
      if (guard === null) continue;
      holding += 1 + ((round + i) % 2);
      most = Math.max(most, holding);
      assert.ok(holding <= limit, `${holding} held`);
      await sleep(round % 3);
      holding -= 1 + ((round + i) % 2);
      await guard.release();
    }
  };
  await Promise.all(fleet.flatMap((inflight, i) => [worker(inflight, i), worker(inflight, i + 1)]));
  assert.ok(most > 1, 'the workers overlapped');
  assert.equal(await fleet[0].estimate('origin'), 0);
  for (const inflight of fleet) inflight.close();
});

test('property: guards balance to zero after any interleaving of acquire, release and double release', async () => {
  const op = fc.record({
    process: fc.integer({ min: 0, max: 2 }),
    key: fc.integer({ min: 0, max: 5 }),
    n: fc.integer({ min: 1, max: 3 }),
    release: fc.integer({ min: 0, max: 6 }),
    twice: fc.boolean(),
  });
  await fc.assert(
    fc.asyncProperty(fc.array(op, { maxLength: 30 }), async (ops) => {
      const name = `balance-${process.pid}-${names++}`;
      const fleet = fixture.clients.map(
        (redis) => new RedisInflight({ redis, name, secret, width: 8, depth: 2 }),
      );
      const held: { guard: RedisInflightGuard; key: number; n: number }[] = [];
      const truth = new Map<number, number>();
      for (const { process: p, key, n, release, twice } of ops) {
        held.push({ guard: await fleet[p].acquire(`k${key}`, n), key, n });
        truth.set(key, (truth.get(key) ?? 0) + n);
        if (release < held.length) {
          const [gone] = held.splice(release, 1);
          await gone.guard.release();
          if (twice) await gone.guard.release();
          truth.set(gone.key, (truth.get(gone.key) as number) - gone.n);
        }
        for (const [k, count] of truth) {
          assert.ok((await fleet[0].estimate(`k${k}`)) >= count, 'never below the guards held');
        }
      }
      await Promise.all(held.map(({ guard }) => guard.release()));
      for (let k = 0; k < 6; k++) assert.equal(await fleet[1].estimate(`k${k}`), 0);
      for (const inflight of fleet) inflight.close();
    }),
    { numRuns: 30 },
  );
});

test('a process killed while holding guards: its share is given back after leaseMs; another keeps its own', async () => {
  const name = `killed-${process.pid}`;
  const options = { name, secret, width: 64, depth: 3, leaseMs: 300 };
  const child = await fleetChild(
    fixture.server.port,
    `const inflight = new hotcount.RedisInflight({ redis, ...${JSON.stringify({ ...options, secret: undefined })}, secret: new Uint8Array(16).fill(51) });
     for (let i = 0; i < 5; i++) await inflight.acquire('origin');`,
  );
  const survivor = new RedisInflight({ redis: fixture.clients[0], ...options });
  const mine = await survivor.acquire('origin', 2);
  assert.equal(await survivor.estimate('origin'), 7);
  child.kill('SIGKILL');
  await once(child, 'exit');
  // Still held within the lease; gone after it (the survivor's timer keeps its own lease).
  assert.equal(await survivor.estimate('origin'), 7);
  await sleep(450);
  assert.equal(await survivor.estimate('origin'), 2);
  await mine.release();
  assert.equal(await survivor.estimate('origin'), 0);
  survivor.close();
});

test('a lease that ended while the process lived: its share is gone, and its late releases take nothing from others', async () => {
  const name = `lapsed-${process.pid}`;
  const options = { name, secret, width: 64, depth: 3, leaseMs: 300 };
  const sleeper = new RedisInflight({ redis: fixture.clients[1], ...options });
  sleeper.close(); // stops renewing: as if paused past its lease
  const guard = await sleeper.acquire('origin', 3);
  await sleep(450);
  const other = new RedisInflight({ redis: fixture.clients[2], ...options });
  const held = await other.acquire('origin');
  assert.equal(await other.estimate('origin'), 1);
  await guard.release();
  assert.equal(await other.estimate('origin'), 1);
  await held.release();
  assert.equal(await other.estimate('origin'), 0);
  other.close();
});

test('another structure under the same name is refused; bad input is named', async () => {
  const name = `taken-${process.pid}`;
  await new RedisCountMinSketch({ redis: fixture.clients[0], name, secret }).increment('a');
  const inflight = new RedisInflight({ redis: fixture.clients[0], name, secret });
  await assert.rejects(inflight.acquire('a'), { name: 'RangeError', message: /another kind/ });
  await assert.rejects(inflight.tryAcquire('a', 0), { name: 'RangeError', message: /limit/ });
  await assert.rejects(inflight.acquire('a', 1.5), { name: 'RangeError', message: /\bn\b/ });
  assert.throws(() => new RedisInflight({ redis: fixture.clients[0], name, secret, leaseMs: 5 }), {
    name: 'RangeError',
    message: /leaseMs/,
  });
  inflight.close();
});
