import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CountMinSketch } from '../../src/index.js';
import { RedisCountMinSketch } from '../../src/redis/index.js';
import { RedisCluster } from '../helpers/redis.js';

const secret = new Uint8Array(16).fill(47);

test('a 3-master Redis Cluster carries several sketches, each in one slot, equal to local ones', async () => {
  const cluster = await RedisCluster.start(3);
  const client = cluster.client();
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
        updates.push(remote.increment(key, 1 + (k % 3)));
      }
      await Promise.all(updates);
      assert.deepEqual((await remote.toSketch()).toBytes(), local.toBytes(), name);
      const [cellsSlot, headerSlot] = await Promise.all(
        [remote.keys.cells, remote.keys.header].map(
          (key) => client.cluster('KEYSLOT', key) as Promise<number>,
        ),
      );
      assert.equal(cellsSlot, headerSlot, 'one hash tag, one slot');
      slots.add(cellsSlot);
    }
    assert.ok(slots.size > 1, 'the sketches spread over the cluster');
  } finally {
    client.disconnect();
    await cluster.stop();
  }
});
