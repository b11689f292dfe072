import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import fc from 'fast-check';
import type { Redis } from 'ioredis';
import { CountMinSketch } from '../../src/index.js';
import { RedisCountMinSketch } from '../../src/redis/index.js';
import {
  clientKind,
  closeClient,
  keepsOrder,
  RedisServer,
  type TestClient,
} from '../helpers/redis.js';

const secret = new Uint8Array(16).fill(46);
let server: RedisServer;
let redis: TestClient;
let other: TestClient;
/** The tests' own reads of what Redis holds. */
let inspector: Redis;
let sketches = 0;
const fresh = () => `test-${process.pid}-${sketches++}`;

before(async () => {
  server = await RedisServer.start();
  redis = await server.client();
  other = await server.client();
  inspector = server.ioredis();
});

after(async () => {
  closeClient(redis);
  closeClient(other);
  inspector.disconnect();
  await server.stop();
});

const update = fc.record({
  key: fc.oneof(fc.integer({ min: 0, max: 40 }), fc.string({ maxLength: 6 })),
  by: fc.oneof(
    fc.integer({ min: 0, max: 5 }),
    fc.constant(0x7fffffff),
    fc.integer({ min: 0, max: 2 ** 30 }),
  ),
  down: fc.boolean(),
});

for (const conservative of [false, true]) {
  test(`property (${conservative ? 'conservative' : 'plain'}): a Redis sketch fed a stream equals the local sketch fed it, cell for cell`, async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(update, { maxLength: 60 }), async (updates) => {
        const name = fresh();
        const local = new CountMinSketch({
          width: 16,
          depth: 3,
          secret,
          conservative,
          engine: 'js',
        });
        // Two clients, as two processes of a fleet, taking turns.
        const remote = [redis, other].map(
          (client) =>
            new RedisCountMinSketch({
              redis: client,
              name,
              secret,
              width: 16,
              depth: 3,
              conservative,
            }),
        );
        let i = 0;
        for (const { key, by, down } of updates) {
          const sketch = remote[i++ % 2];
          if (down && !conservative) {
            assert.equal(await sketch.decrement(key, by), local.decrement(key, by));
          } else {
            assert.equal(await sketch.increment(key, by), local.increment(key, by));
          }
        }
        const copy = await remote[0].toSketch();
        assert.deepEqual(copy.toBytes(), local.toBytes());
        assert.equal(await remote[1].total, local.total);
        for (const { key } of updates)
          assert.equal(await remote[1].estimate(key), local.estimate(key));
      }),
      { numRuns: 40 },
    );
  });
}

test('one Redis string per sketch, under a hash tag; memory is the cells, whatever the keys', async () => {
  const name = fresh();
  const sketch = new RedisCountMinSketch({ redis, name, secret, width: 1024, depth: 4 });
  assert.deepEqual(sketch.keys, {
    cells: `hotcount:{${name}}:cells`,
    header: `hotcount:{${name}}:header`,
  });
  // 5,000 calls in flight at once, written in groups: every one counted, and each answered
  // with its own estimate (the replies matched to their calls, in order).
  const local = new CountMinSketch({ secret, width: 1024, depth: 4 });
  const pipeline = [];
  const expected = [];
  for (let i = 0; i < 5000; i++) {
    const key = `client-${i % 1700}`;
    const answer = sketch.increment(key);
    if (!keepsOrder(clientKind)) await answer;
    pipeline.push(answer);
    expected.push(local.increment(key));
  }
  assert.deepEqual(await Promise.all(pipeline), expected);
  assert.deepEqual((await sketch.toSketch()).toBytes(), local.toBytes());
  assert.equal(await sketch.total, 5000);
  assert.ok((await inspector.strlen(sketch.keys.cells)) <= 1024 * 4 * 4);
  assert.deepEqual((await inspector.keys(`hotcount:{${name}}:*`)).sort(), [
    sketch.keys.cells,
    sketch.keys.header,
  ]);
});

test('another shape or another secret under the same name is refused, and nothing is written', async () => {
  const name = fresh();
  const first = new RedisCountMinSketch({ redis, name, secret, width: 64, depth: 2 });
  await first.increment('a', 3);
  const before = await inspector.getBuffer(first.keys.cells);
  const wider = new RedisCountMinSketch({ redis: other, name, secret, width: 128, depth: 2 });
  await assert.rejects(wider.increment('a'), {
    name: 'RangeError',
    message: /is 64 x 2, plain, not 128 x 2, plain/,
  });
  const stranger = new RedisCountMinSketch({
    redis: other,
    name,
    secret: new Uint8Array(16).fill(7),
    width: 64,
    depth: 2,
  });
  await assert.rejects(stranger.increment('a'), { name: 'RangeError', message: /another secret/ });
  await assert.rejects(stranger.estimate('a'), { name: 'RangeError', message: /another secret/ });
  const conservative = new RedisCountMinSketch({
    redis: other,
    name,
    secret,
    width: 64,
    depth: 2,
    conservative: true,
  });
  await assert.rejects(conservative.increment('a'), {
    name: 'RangeError',
    message: /conservative/,
  });
  assert.deepEqual(await inspector.getBuffer(first.keys.cells), before);
  assert.equal(await first.estimate('a'), 3);
  const header = await inspector.hgetall(first.keys.header);
  assert.ok(
    !Object.values(header).some((value) => value.includes(Buffer.from(secret).toString('hex'))),
  );
});

test('bad options are refused, naming the option', () => {
  assert.throws(() => new RedisCountMinSketch({ redis, name: 'x' } as never), {
    name: 'TypeError',
    message: /secret is required/,
  });
  assert.throws(() => new RedisCountMinSketch({ redis, name: 'a{b}', secret }), {
    name: 'RangeError',
    message: /name/,
  });
  assert.throws(() => new RedisCountMinSketch({ redis: {} as never, name: 'x', secret }), {
    name: 'TypeError',
    message: /redis/,
  });
  assert.throws(() => new RedisCountMinSketch({ redis, name: 'x', secret, widht: 3 } as never), {
    name: 'TypeError',
    message: /widht/,
  });
  const sketch = new RedisCountMinSketch({ redis, name: 'x', secret, conservative: true });
  assert.rejects(sketch.decrement('a'), { name: 'TypeError', message: /plain/ });
  assert.rejects(sketch.increment('a', -1), { name: 'RangeError', message: /by/ });
});
