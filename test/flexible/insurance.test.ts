/**
 * RateLimiterSketch where rate-limiter-flexible takes a limiter: the insuranceLimiter of a
 * RateLimiterRedis on a real redis-server that stops and comes back. (RateLimiterUnion and
 * RLWrapperBlackAndWhite over it run in the peer's own suites, test/peers/rate-limiter-flexible.)
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Redis } from 'ioredis';
import flexible from 'rate-limiter-flexible';
import { RateLimiterSketch } from '../../src/flexible/index.js';
import { RedisServer } from '../helpers/redis.js';
import { until } from '../helpers/until.js';

const { RateLimiterRedis, RateLimiterRes } = flexible;

let server: RedisServer;
let client: Redis;

before(async () => {
  server = await RedisServer.start();
  // Without the offline queue a command fails at once while Redis is away, as the peer's guide
  // asks of a client with an insurance limiter.
  client = server.ioredis({ enableOfflineQueue: false });
  await until(() => client.status === 'ready', 'the client to connect');
});

after(async () => {
  client.disconnect();
  await server.stop();
});

async function refused(promise: Promise<unknown>): Promise<InstanceType<typeof RateLimiterRes>> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof RateLimiterRes) return error;
    throw error;
  }
  assert.fail('the consume was let through');
}

test('takes over as the insuranceLimiter of RateLimiterRedis while Redis is away', async () => {
  const insurance = new RateLimiterSketch({ points: 1, duration: 60 });
  const limiter = new RateLimiterRedis({
    storeClient: client,
    keyPrefix: 'login',
    points: 3,
    duration: 60,
    blockDuration: 120,
    insuranceLimiter: insurance,
  });
  // The peer gives its insurance its own blockDuration and execEvenly.
  assert.equal(insurance.blockDuration, 120);

  await limiter.consume('alice');
  await limiter.consume('alice');
  assert.equal(await client.get('login:alice'), '2', 'counted in Redis while it is up');

  await server.stop();
  await until(() => client.status !== 'ready', 'the client to see Redis go');
  const res = await limiter.consume('bob');
  assert.equal(res.consumedPoints, 1, 'counted by the insurance');
  const rejected = await refused(limiter.consume('bob'));
  assert.equal(rejected.msBeforeNext, 120_000, 'blocked by the insurance for blockDuration');
  await refused(limiter.consume('bob'));
  assert.equal((await limiter.get('bob'))?.consumedPoints, 3);

  await server.restart();
  await until(() => client.status === 'ready', 'the client to reconnect');
  await limiter.consume('carol');
  assert.equal(await client.get('login:carol'), '1', 'counted in Redis again once it is back');
  assert.equal(await client.get('login:bob'), null, 'the insurance kept its counts');
});
