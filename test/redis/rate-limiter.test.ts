import assert from 'node:assert/strict';
import { once } from 'node:events';
import { test } from 'node:test';
import fc from 'fast-check';
import { RateLimiter } from '../../src/index.js';
import { RedisRateLimiter, type RedisRateLimiterOptions } from '../../src/redis/index.js';
import {
  clientKind,
  closeClient,
  keepsOrder,
  RedisServer,
  redisForFile,
} from '../helpers/redis.js';
import { until } from '../helpers/until.js';

const secret = new Uint8Array(16).fill(49);
const fixture = redisForFile(2);
let limiters = 0;

/** Random requests, costs and clock steps: one step of a stream. */
function steps(maxCost: number, maxAdvanceMs: number) {
  const step = fc.record({
    key: fc.integer({ min: 0, max: 12 }),
    cost: fc.oneof(fc.constant(1), fc.integer({ min: 0, max: maxCost })),
    advance: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: maxAdvanceMs })),
  });
  return fc.array(step, { maxLength: 80 });
}

/**
 * Feeds `stream` to a local RateLimiter and to two RedisRateLimiters of one name (two processes
 * of a fleet, taking turns), on one clock; every decision must be the same. Steps that do not
 * move the clock are made at once, in one tick, without waiting for the ones before (a server's
 * concurrent requests: one script call for them all), by one of the two.
 */
async function sameDecisions(
  stream: { key: number; cost: number; advance: number }[],
  options: Omit<RedisRateLimiterOptions, 'redis' | 'name' | 'secret' | 'now'>,
) {
  let now = 1_000_000_000 + 137;
  const shape = { secret, width: 16, depth: 3, ...options, now: () => now };
  const local = new RateLimiter(shape);
  const name = `limiter-${process.pid}-${limiters++}`;
  const remote = fixture.clients.map((redis) => new RedisRateLimiter({ redis, name, ...shape }));
  let turn = 0;
  let together: Promise<void>[] = [];
  for (const [i, { key, cost, advance }] of stream.entries()) {
    if (advance > 0) {
      await Promise.all(together);
      together = [];
      turn++;
      now += advance;
    }
    const expected = local.check(`client-${key}`, cost);
    const decided = remote[turn % 2].check(`client-${key}`, cost);
    if (!keepsOrder(clientKind)) await decided; // its batches could run out of order
    together.push(decided.then((decision) => assert.deepEqual(decision, expected, `step ${i}`)));
  }
  await Promise.all(together);
}

test('property: a RedisRateLimiter decides a stream exactly as a local RateLimiter (same secret, shape, clock)', async () => {
  await fc.assert(
    fc.asyncProperty(steps(4, 400), fc.integer({ min: 1, max: 6 }), (stream, limit) =>
      sameDecisions(stream, { limit, windowMs: 1000 }),
    ),
    { numRuns: 60 },
  );
});

test('property: gcra in Redis decides a stream exactly as a local gcra RateLimiter, across eras', async () => {
  await fc.assert(
    fc.asyncProperty(
      steps(6, 700),
      fc.integer({ min: 1, max: 6 }),
      fc.integer({ min: 1, max: 5 }),
      fc.constantFrom(1000, 999, 7),
      (stream, limit, burst, windowMs) =>
        sameDecisions(stream, { limit, windowMs, algorithm: 'gcra', burst }),
    ),
    { numRuns: 60 },
  );
});

test('Redis holds two windows of cells per limiter, expiring, whatever the number of clients', async () => {
  const limiter = new RedisRateLimiter({
    redis: fixture.clients[0],
    name: `windows-${process.pid}`,
    secret,
    limit: 10,
    windowMs: 60_000,
    width: 256,
    depth: 4,
  });
  await Promise.all(Array.from({ length: 3000 }, (_, i) => limiter.check(`client-${i}`)));
  const keys = await fixture.inspector.keys(`hotcount:{windows-${process.pid}}:*`);
  assert.ok(keys.length <= 3, keys.join(' '));
  const window = keys.find((key) => key.includes(':w:')) as string;
  assert.ok((await fixture.inspector.strlen(window)) <= 256 * 4 * 4);
  const ttl = await fixture.inspector.pttl(window);
  assert.ok(ttl > 0 && ttl <= 120_000, `ttl ${ttl}`);
});

test('another limit or secret under the same name is refused; bad options are named', async () => {
  const name = `refused-${process.pid}`;
  await new RedisRateLimiter({
    redis: fixture.clients[0],
    name,
    secret,
    limit: 5,
    windowMs: 1000,
  }).check('a');
  await assert.rejects(
    new RedisRateLimiter({
      redis: fixture.clients[1],
      name,
      secret,
      limit: 6,
      windowMs: 1000,
    }).check('a'),
    {
      name: 'RangeError',
      message: /another limit/,
    },
  );
  assert.throws(
    () =>
      new RedisRateLimiter({ redis: fixture.clients[0], name, secret, limit: 0, windowMs: 1000 }),
    { name: 'RangeError', message: /limit/ },
  );
  assert.throws(
    () =>
      new RedisRateLimiter({ redis: fixture.clients[0], name, secret, limit: 1, windowMs: 0.5 }),
    { name: 'RangeError', message: /windowMs/ },
  );
  assert.throws(
    () =>
      new RedisRateLimiter({
        redis: fixture.clients[0],
        name,
        secret,
        limit: 1,
        windowMs: 1000,
        burst: 2,
      }),
    { name: 'RangeError', message: /burst applies to algorithm 'gcra'/ },
  );
  await assert.rejects(
    new RedisRateLimiter({
      redis: fixture.clients[0],
      name,
      secret,
      limit: 5,
      windowMs: 1000,
      algorithm: 'gcra',
    }).check('a'),
    { name: 'RangeError', message: /another limit/ },
  );
  await assert.rejects(
    new RedisRateLimiter({
      redis: fixture.clients[0],
      name,
      secret,
      limit: 5,
      windowMs: 1000,
    }).check('a', -1),
    { name: 'RangeError', message: /cost/ },
  );
});

test('Redis gone, direct mode: checks resolve by the policy within timeoutMs, one probe at a time; the events; back when Redis is', async () => {
  const own = await RedisServer.start(['--appendonly', 'yes', '--appendfsync', 'always']);
  // A client that queues commands while it reconnects (ioredis's default): the case that hangs
  // other limiters.
  const redis = await own.client({ waitForever: true });
  const options = { redis, secret, limit: 3, windowMs: 3_600_000, timeoutMs: 200 };
  const local = new RedisRateLimiter({ name: 'gone', ...options });
  const closed = new RedisRateLimiter({ name: 'gone', ...options, onStale: 'closed' });
  const open = new RedisRateLimiter({ name: 'gone', ...options, onStale: 'open' });
  try {
    assert.equal((await local.check('a')).allowed, true);
    await own.stop('SIGKILL');
    const stale = once(local, 'stale');
    const started = Date.now();
    // 'local': a local limiter of the same shape decides, from the first failure on.
    const decisions = await Promise.all(Array.from({ length: 5 }, () => local.check('a')));
    assert.ok(Date.now() - started < 1500, `took ${Date.now() - started} ms`);
    await stale;
    assert.equal(local.status.stale, true);
    assert.equal(decisions.filter((d) => d.allowed).length, 3);
    assert.equal((await closed.check('b')).allowed, false);
    assert.equal((await open.check('b', 3)).allowed, true);
    // While stale, checks other than the probe decide at once.
    const probe = local.check('c');
    const quick = Date.now();
    await local.check('c');
    assert.ok(Date.now() - quick < 100, `a check waited ${Date.now() - quick} ms behind the probe`);
    await probe;
    await own.restart();
    const synced = once(local, 'sync');
    await until(async () => {
      await local.check('d', 0);
      return !local.status.stale;
    }, 'Redis back');
    await synced;
    // Redis kept its count of a (AOF); checks that timed out in the client's offline queue may
    // have run on reconnecting, and count too: more, never less.
    assert.ok((await local.check('a', 0)).remaining <= 2, 'Redis kept its own count of a');
  } finally {
    closeClient(redis);
    await own.stop();
  }
});
