/**
 * The Redis layer with clients other than ioredis, on a real redis-server: each structure as a
 * user of that client runs it (issue 38). iovalkey, the Valkey project's fork of ioredis, has
 * ioredis's shape and goes through the same adapter.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Valkey } from 'iovalkey';
import {
  LocalFirstSketch,
  type RedisClient,
  RedisCountMinSketch,
  RedisInflight,
  RedisRateLimiter,
} from '../../src/redis/index.js';
import { RedisServer } from '../helpers/redis.js';

const secret = new Uint8Array(16).fill(38);
let server: RedisServer;
let valkey: Valkey;
let names = 0;
const fresh = () => `clients-${process.pid}-${names++}`;

before(async () => {
  server = await RedisServer.start();
  valkey = new Valkey(server.port, '127.0.0.1', { maxRetriesPerRequest: 1 });
});

after(async () => {
  valkey.disconnect();
  await server.stop();
});

/** The client as the layer's options type it (an ioredis client, whose shape iovalkey has). */
const client = () => valkey as unknown as RedisClient;

test('iovalkey: RedisRateLimiter counts in Redis and refuses over the limit, in both modes', async () => {
  for (const localFirst of [undefined, { syncMs: 20 }]) {
    const name = fresh();
    const options = { redis: client(), name, secret, limit: 3, windowMs: 60_000, localFirst };
    const limiter = new RedisRateLimiter(options);
    const allowed = [];
    for (let i = 0; i < 5; i++) allowed.push((await limiter.check('203.0.113.7')).allowed);
    await limiter.close();
    assert.deepEqual(
      allowed,
      [true, true, true, false, false],
      `localFirst ${localFirst !== undefined}`,
    );
    // A second process of the fleet sees the same counts in Redis.
    const other = new RedisRateLimiter({ ...options, localFirst: undefined });
    assert.equal((await other.check('203.0.113.7')).allowed, false);
    await other.close();
  }
});

test('iovalkey: RedisCountMinSketch increments, estimates and copies out the cells', async () => {
  const sketch = new RedisCountMinSketch({
    redis: client(),
    name: fresh(),
    secret,
    width: 64,
    depth: 3,
  });
  for (let i = 0; i < 7; i++) await sketch.increment('customer-42');
  await sketch.increment('customer-7', 3);
  assert.equal(await sketch.estimate('customer-42'), 7);
  assert.equal(await sketch.total, 10);
  const local = await sketch.toSketch();
  assert.equal(local.estimate('customer-7'), 3);
});

test('iovalkey: LocalFirstSketch pushes its counts, and RedisInflight gives back what it took', async () => {
  const name = fresh();
  const local = new LocalFirstSketch({
    redis: client(),
    name,
    secret,
    width: 64,
    depth: 3,
    syncMs: 20,
  });
  for (let i = 0; i < 5; i++) local.increment('origin-a');
  await local.close();
  const shared = new RedisCountMinSketch({ redis: client(), name, secret, width: 64, depth: 3 });
  assert.equal(await shared.estimate('origin-a'), 5);

  const inflight = new RedisInflight({
    redis: client(),
    name: fresh(),
    secret,
    width: 64,
    depth: 3,
  });
  const first = await inflight.tryAcquire('origin-b', 2);
  const second = await inflight.tryAcquire('origin-b', 2);
  assert.equal(await inflight.tryAcquire('origin-b', 2), null, 'the third is refused');
  await first?.release();
  await second?.release();
  assert.equal(await inflight.estimate('origin-b'), 0);
  inflight.close();
});
