import assert from 'node:assert/strict';
import { once } from 'node:events';
import { test } from 'node:test';
import type { Redis } from 'ioredis';
import { CountMinSketch } from '../../src/index.js';
import { LocalFirstSketch, RedisCountMinSketch } from '../../src/redis/index.js';
import { closeClient, RedisServer, retried } from '../helpers/redis.js';

const secret = new Uint8Array(16).fill(48);
const shape = { secret, width: 64, depth: 3 };

/** The calls of one command Redis has run, from INFO commandstats. */
async function calls(redis: Redis, command: string): Promise<number> {
  const info = await redis.info('commandstats');
  return Number(new RegExp(`cmdstat_${command}:calls=(\\d+)`).exec(info)?.[1] ?? 0);
}

/** The bytes of the sketch `name` as Redis holds it, read by a client of its own (ioredis). */
async function storedBytes(server: RedisServer, name: string, dims = shape): Promise<Uint8Array> {
  const reader = server.ioredis();
  try {
    return (await new RedisCountMinSketch({ redis: reader, name, ...dims }).toSketch()).toBytes();
  } finally {
    reader.disconnect();
  }
}

test('local-first: the hot path stays in process; after a sync Redis holds the counts of every process', async () => {
  const server = await RedisServer.start();
  const clients = await Promise.all([server.client(), server.client(), server.client()]);
  const inspector = server.ioredis();
  try {
    const name = 'local-first-fleet';
    const processes = clients
      .slice(0, 2)
      .map((redis) => new LocalFirstSketch({ redis, name, ...shape, syncMs: 3_600_000 }));
    const local = new CountMinSketch({ ...shape, engine: 'js' });
    const before = (await calls(inspector, 'evalsha')) + (await calls(inspector, 'eval'));
    for (let i = 0; i < 5000; i++) {
      const key = `client-${i % 300}`;
      const by = 1 + (i % 4);
      const process = processes[i % 2];
      const answer = i % 7 === 0 ? process.decrement(key, 1) : process.increment(key, by);
      if (i % 7 === 0) local.decrement(key, 1);
      else local.increment(key, by);
      // The answer is the process's own view at once: what it reads back without Redis.
      assert.equal(answer, process.estimate(key));
    }
    const after = (await calls(inspector, 'evalsha')) + (await calls(inspector, 'eval'));
    assert.equal(after, before, '5000 updates, no Redis command');
    await Promise.all(processes.map((p) => p.flush()));
    await processes[0].flush(); // pulls what the other pushed
    const reader = new RedisCountMinSketch({ redis: clients[2], name, ...shape });
    assert.deepEqual((await reader.toSketch()).toBytes(), local.toBytes());
    for (let k = 0; k < 300; k++)
      assert.equal(processes[0].estimate(`client-${k}`), local.estimate(`client-${k}`));
    assert.equal(processes[0].status.stale, false);
    await Promise.all(processes.map((p) => p.close()));
  } finally {
    for (const client of clients) closeClient(client);
    inspector.disconnect();
    await server.stop();
  }
});

test('Redis killed and restarted (AOF, fsync always): nothing counted is lost, nothing blocks or throws', async () => {
  const server = await RedisServer.start(['--appendonly', 'yes', '--appendfsync', 'always']);
  const redis = await server.client({ failWhenDown: true, commandTimeoutMs: 300 });
  const sketch = new LocalFirstSketch({ redis, name: 'survives', ...shape, syncMs: 3_600_000 });
  const local = new CountMinSketch({ ...shape, engine: 'js' });
  const count = (n: number, from: number) => {
    for (let i = from; i < from + n; i++) {
      sketch.increment(`k${i % 50}`, 2);
      local.increment(`k${i % 50}`, 2);
    }
  };
  try {
    count(500, 0);
    await sketch.flush();
    await server.stop('SIGKILL');
    const stale = once(sketch, 'stale');
    count(500, 500); // the hot path, with Redis gone
    await assert.rejects(sketch.flush());
    await stale;
    assert.equal(sketch.status.stale, true);
    count(500, 1000);
    await assert.rejects(sketch.flush());
    await server.restart();
    await retried(() => sketch.flush());
    await sketch.flush(); // what was counted after the taken push
    assert.equal(sketch.status.stale, false);
    assert.deepEqual(await storedBytes(server, 'survives'), local.toBytes());
  } finally {
    await sketch.close().catch(() => {});
    closeClient(redis);
    await server.stop();
  }
});

test('SIGSTOP past every timeout, then SIGCONT: a push whose reply was lost is applied once', async () => {
  const server = await RedisServer.start();
  const redis = await server.client({ commandTimeoutMs: 200 });
  // Two timeouts, the client's and the sketch's: node-redis before 6 has none for a command
  // already sent, and then the sketch's is the one that gives up.
  const sketch = new LocalFirstSketch({
    redis,
    name: 'paused',
    ...shape,
    syncMs: 3_600_000,
    timeoutMs: 400,
  });
  const local = new CountMinSketch({ ...shape, engine: 'js' });
  try {
    for (let i = 0; i < 300; i++) {
      sketch.increment(`k${i % 40}`);
      local.increment(`k${i % 40}`);
    }
    server.signal('SIGSTOP');
    // The push reaches the paused server's socket; its reply never comes in time.
    await assert.rejects(sketch.flush(), /timed out|did not answer within/i);
    server.signal('SIGCONT'); // the server now applies it, and answers no one
    await new Promise((resolve) => setTimeout(resolve, 200));
    await sketch.flush(); // the same push again: not applied twice
    assert.deepEqual(await storedBytes(server, 'paused'), local.toBytes());
  } finally {
    server.signal('SIGCONT');
    await sketch.close().catch(() => {});
    closeClient(redis);
    await server.stop();
  }
});

test('Redis paused, a client with no timeout of its own: the sketch gives up after timeoutMs, goes stale, and syncs exactly once after', async () => {
  const server = await RedisServer.start();
  const redis = await server.client({ waitForever: true });
  const sketch = new LocalFirstSketch({
    redis,
    name: 'paused-no-timeout',
    ...shape,
    syncMs: 3_600_000,
    timeoutMs: 300,
  });
  const local = new CountMinSketch({ ...shape, engine: 'js' });
  const count = (n: number) => {
    for (let i = 0; i < n; i++) {
      sketch.increment(`k${i % 30}`, 3);
      local.increment(`k${i % 30}`, 3);
    }
  };
  try {
    count(100);
    await sketch.flush();
    server.signal('SIGSTOP');
    count(100);
    const stale = once(sketch, 'stale');
    const started = Date.now();
    await assert.rejects(sketch.flush(), /did not answer within 300 ms/);
    assert.ok(Date.now() - started < 1000, `flush took ${Date.now() - started} ms`);
    await stale;
    count(100); // the hot path, with Redis paused
    assert.equal(sketch.status.stale, true);
    server.signal('SIGCONT');
    const synced = once(sketch, 'sync');
    await sketch.flush(); // the push that timed out, again: applied once
    await sketch.flush(); // what was counted meanwhile
    await synced;
    assert.deepEqual(await storedBytes(server, 'paused-no-timeout'), local.toBytes());
  } finally {
    server.signal('SIGCONT');
    await sketch.close().catch(() => {});
    closeClient(redis);
    await server.stop();
  }
});

test('a push of more cells than one script call can unpack at once goes in chunks, whole', async () => {
  const server = await RedisServer.start();
  const redis = await server.client();
  const wide = { secret, width: 2048, depth: 4 };
  const sketch = new LocalFirstSketch({ redis, name: 'wide', ...wide, syncMs: 3_600_000 });
  const local = new CountMinSketch({ ...wide, engine: 'js' });
  try {
    for (let i = 0; i < 5000; i++) {
      sketch.increment(`client-${i}`, 1 + (i % 3));
      local.increment(`client-${i}`, 1 + (i % 3));
    }
    await sketch.flush(); // thousands of touched cells in one push
    assert.deepEqual(await storedBytes(server, 'wide', wide), local.toBytes());
  } finally {
    await sketch.close();
    closeClient(redis);
    await server.stop();
  }
});

test('a local-first sketch of another shape under the same name is refused with a RangeError, nothing written', async () => {
  const server = await RedisServer.start();
  const redis = await server.client();
  const first = new LocalFirstSketch({ redis, name: 'shaped', ...shape, syncMs: 3_600_000 });
  const other = new LocalFirstSketch({
    redis,
    name: 'shaped',
    secret,
    width: 128,
    depth: 3,
    syncMs: 3_600_000,
  });
  try {
    first.increment('a');
    await first.flush();
    other.increment('a', 5);
    await assert.rejects(other.flush(), {
      name: 'RangeError',
      message: /is 64 x 3, plain, not 128 x 3, plain/,
    });
    assert.equal(first.estimate('a'), 1);
    await first.flush();
    assert.equal(first.estimate('a'), 1, 'nothing of the refused push reached Redis');
  } finally {
    await first.close();
    closeClient(redis);
    await server.stop();
  }
});
