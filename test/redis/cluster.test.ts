import assert from 'node:assert/strict';
import { once } from 'node:events';
import { test } from 'node:test';
import { CountMinSketch, RateLimiter } from '../../src/index.js';
import { RedisCountMinSketch, RedisInflight, RedisRateLimiter } from '../../src/redis/index.js';
import { closeClient, RedisCluster, retried } from '../helpers/redis.js';

const secret = new Uint8Array(16).fill(47);

test('a 3-master Redis Cluster carries several sketches, each in one slot, equal to local ones', async () => {
  const cluster = await RedisCluster.start(3);
  const client = await cluster.client();
  const inspector = cluster.servers[0].ioredis();
  try {
    const names = Array.from({ length: 8 }, (_, i) => `cluster-sketch-${i}`);
    const slots = new Set<number>();
    for (const [i, name] of names.entries()) {
      const conservative = i % 2 === 1;
      const remote = new RedisCountMinSketch({
        redis: client,
        name,
        secret,
        width: 32,
        depth: 3,
        conservative,
      });
      const local = new CountMinSketch({ width: 32, depth: 3, secret, conservative, engine: 'js' });
      const updates: Promise<number>[] = [];
      for (let k = 0; k < 200; k++) {
        const key = `client-${(k * 7 + i) % 50}`;
        local.increment(key, 1 + (k % 3));
        const update = remote.increment(key, 1 + (k % 3));
        // A conservative sketch's cells depend on the order of its updates, and not every
        // cluster client keeps concurrent commands to a node in order (glide's does not): one
        // at a time. A plain sketch's are a sum, in any order.
        if (conservative) await update;
        updates.push(update);
      }
      await Promise.all(updates);
      assert.deepEqual((await remote.toSketch()).toBytes(), local.toBytes(), name);
      const [cellsSlot, headerSlot] = await Promise.all(
        [remote.keys.cells, remote.keys.header].map(
          (key) => inspector.cluster('KEYSLOT', key) as Promise<number>,
        ),
      );
      assert.equal(cellsSlot, headerSlot, 'one hash tag, one slot');
      slots.add(cellsSlot);
    }
    assert.ok(slots.size > 1, 'the sketches spread over the cluster');
  } finally {
    closeClient(client);
    inspector.disconnect();
    await cluster.stop();
  }
});

test('on a Cluster, limiters and inflight work in their slots; a master killed: its limiter goes stale and keeps deciding, the others go on, and it syncs again on restart', async () => {
  const cluster = await RedisCluster.start(3);
  const client = await cluster.client();
  const inspector = cluster.servers[0].ioredis();
  inspector.on('error', () => {});
  try {
    let now = 1_700_000_000_000;
    const clock = () => now;
    const shape = { secret, width: 32, depth: 3, windowMs: 60_000, now: clock };
    // Direct limiters (both algorithms) decide as local ones do, on whichever master they live.
    for (const algorithm of ['sliding-window', 'gcra'] as const) {
      const options = { ...shape, limit: 5, algorithm };
      const remote = new RedisRateLimiter({ redis: client, name: `cl-${algorithm}`, ...options });
      const local = new RateLimiter(options);
      for (let i = 0; i < 30; i++) {
        now += 700;
        assert.deepEqual(await remote.check(`k${i % 4}`), local.check(`k${i % 4}`), algorithm);
      }
    }
    const inflight = new RedisInflight({ redis: client, name: 'cl-inflight', secret });
    const guard = await inflight.tryAcquire('origin', 1);
    assert.notEqual(guard, null);
    assert.equal(await inflight.tryAcquire('origin', 1), null);
    await guard?.release();
    assert.equal(await inflight.estimate('origin'), 0);
    inflight.close();

    // Local-first limiters spread over the masters; find one whose slot a master holds alone.
    const slotsOwners = (await inspector.cluster('SLOTS')) as unknown as [
      number,
      number,
      [string, number],
    ][];
    const portOf = (slot: number) =>
      slotsOwners.find(([from, to]) => slot >= from && slot <= to)?.[2][1] as number;
    const limiters = await Promise.all(
      Array.from({ length: 6 }, async (_, i) => {
        const name = `cl-first-${i}`;
        const limiter = new RedisRateLimiter({
          redis: client,
          name,
          ...shape,
          limit: 100,
          localFirst: { syncMs: 3_600_000 },
          timeoutMs: 300,
        });
        const slot = (await inspector.cluster('KEYSLOT', `hotcount:{${name}}:x`)) as number;
        return { limiter, port: portOf(slot) };
      }),
    );
    for (const { limiter } of limiters) {
      for (let i = 0; i < 10; i++) limiter.checkLocal('hot');
      await limiter.flush();
    }
    const victim = cluster.servers.find((server) =>
      limiters.some(({ port }) => port === server.port),
    ) as (typeof cluster.servers)[number];
    const down = limiters.filter(({ port }) => port === victim.port);
    const up = limiters.filter(({ port }) => port !== victim.port);
    assert.ok(down.length > 0 && up.length > 0, 'the limiters spread over several masters');
    await victim.stop('SIGKILL');
    for (const { limiter } of down) {
      const stale = once(limiter, 'stale');
      for (let i = 0; i < 10; i++) assert.equal(limiter.checkLocal('hot').allowed, true);
      await assert.rejects(limiter.flush());
      await stale;
      // It decides from what it knows: 20 of 100.
      assert.equal(limiter.checkLocal('hot', 0).remaining, 80);
    }
    for (const { limiter } of up) {
      limiter.checkLocal('hot');
      await limiter.flush();
      assert.equal(limiter.status.stale, false);
    }
    await victim.restart();
    for (const { limiter } of down) {
      await retried(() => limiter.flush());
      assert.equal(limiter.status.stale, false);
    }
    await Promise.all(limiters.map(({ limiter }) => limiter.close()));
  } finally {
    closeClient(client);
    inspector.disconnect();
    await cluster.stop();
  }
});
