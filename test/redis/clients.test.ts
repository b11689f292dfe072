/**
 * The client seam (src/redis/client.ts), with the client of this run's kind (the Redis suites run
 * once per kind, test/helpers/redis-clients.ts): the client speaks the protocol its kind says, a
 * script Redis lost is sent again by every structure, and a client the layer does not know is
 * refused by name.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  LocalFirstSketch,
  RedisCountMinSketch,
  RedisInflight,
  RedisRateLimiter,
} from '../../src/redis/index.js';
import { clientKind, redisForFile } from '../helpers/redis.js';
import { respOf } from '../helpers/redis-clients.js';

const secret = new Uint8Array(16).fill(38);
const fixture = redisForFile(1);
let names = 0;
const fresh = () => `clients-${process.pid}-${names++}`;

/** How many times Redis ran `command`, from INFO commandstats. */
async function calls(command: string): Promise<number> {
  const info = await fixture.inspector.info('commandstats');
  return Number(new RegExp(`cmdstat_${command}:calls=(\\d+)`).exec(info)?.[1] ?? 0);
}

test(`${clientKind}: the client's connections speak RESP${respOf(clientKind)}, and a limiter decides over them`, async () => {
  const limiter = new RedisRateLimiter({
    redis: fixture.clients[0],
    name: fresh(),
    secret,
    limit: 2,
    windowMs: 60_000,
  });
  const allowed = [];
  for (let i = 0; i < 3; i++) allowed.push((await limiter.check('203.0.113.7')).allowed);
  await limiter.close();
  assert.deepEqual(allowed, [true, true, false]);
  const list = (await fixture.inspector.client('LIST')) as string;
  const protocols = new Set(
    list
      .split('\n')
      .filter((line) => /cmd=evalsha|cmd=eval\b/.test(line))
      .map((line) => /resp=(\d)/.exec(line)?.[1]),
  );
  assert.deepEqual([...protocols], [String(respOf(clientKind))], list);
});

test(`${clientKind}: a script Redis lost (SCRIPT FLUSH, as after a restart) is sent again by every structure`, async () => {
  const redis = fixture.clients[0];
  const name = fresh();
  const limiter = new RedisRateLimiter({ redis, name, secret, limit: 5, windowMs: 60_000 });
  const sketch = new RedisCountMinSketch({ redis, name: fresh(), secret, width: 64, depth: 3 });
  const inflight = new RedisInflight({ redis, name: fresh(), secret, width: 64, depth: 3 });
  const local = new LocalFirstSketch({
    redis,
    name: fresh(),
    secret,
    width: 64,
    depth: 3,
    syncMs: 3_600_000,
  });
  // Every script loaded once.
  await limiter.check('a');
  await sketch.increment('a');
  await (await inflight.tryAcquire('a', 5))?.release();
  local.increment('a');
  await local.flush();

  await fixture.inspector.script('FLUSH');
  const before = await calls('eval');
  assert.equal((await limiter.check('a')).remaining, 3);
  assert.equal(await sketch.increment('a'), 2);
  const guard = await inflight.tryAcquire('a', 5);
  assert.notEqual(guard, null);
  await guard?.release();
  assert.equal(await inflight.estimate('a'), 0);
  local.increment('a', 2);
  await local.flush();
  assert.equal(
    await new RedisCountMinSketch({
      redis,
      name: local.name,
      secret,
      width: 64,
      depth: 3,
    }).estimate('a'),
    3,
  );
  assert.ok((await calls('eval')) > before, 'the scripts went again as EVAL');

  await limiter.close();
  inflight.close();
  await local.close();
});

test('a client the layer does not know is refused with a TypeError that names the clients it takes', () => {
  const accepted =
    /redis must be an ioredis or iovalkey Redis or Cluster, a node-redis client \(createClient\) or cluster \(createCluster\), or a valkey-glide GlideClient or GlideClusterClient/;
  for (const redis of [
    {},
    null,
    'redis://127.0.0.1:6379',
    { sendCommand: () => Promise.resolve(null) }, // neither a node-redis client nor a cluster
    { call: () => Promise.resolve(null) }, // an ioredis-like without defineCommand
  ]) {
    for (const make of [
      () =>
        new RedisRateLimiter({
          redis: redis as never,
          name: 'x',
          secret,
          limit: 1,
          windowMs: 1000,
        }),
      () => new RedisCountMinSketch({ redis: redis as never, name: 'x', secret }),
      () => new RedisInflight({ redis: redis as never, name: 'x', secret }),
      () => new LocalFirstSketch({ redis: redis as never, name: 'x', secret }),
    ]) {
      assert.throws(make, { name: 'TypeError', message: accepted });
    }
  }
});
