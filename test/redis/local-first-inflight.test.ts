import assert from 'node:assert/strict';
import { once } from 'node:events';
import { test } from 'node:test';
import fc from 'fast-check';
import type { InflightGuard } from '../../src/index.js';
import { LocalFirstInflight } from '../../src/redis/index.js';
import { closeClient, fleetChild, RedisServer, redisForFile } from '../helpers/redis.js';

const secret = new Uint8Array(16).fill(52);
const fixture = redisForFile(2);
let names = 0;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const options = { secret, width: 256, depth: 3, syncMs: 100, leaseMs: 300 };

test('property: after every process syncs, each sees the fleet holding exactly what its guards hold; all released, 0', async () => {
  const op = fc.record({
    process: fc.integer({ min: 0, max: 1 }),
    key: fc.integer({ min: 0, max: 4 }),
    n: fc.integer({ min: 1, max: 3 }),
    release: fc.integer({ min: 0, max: 5 }),
    twice: fc.boolean(),
    sync: fc.boolean(),
  });
  await fc.assert(
    fc.asyncProperty(fc.array(op, { maxLength: 30 }), async (ops) => {
      const name = `lfi-${process.pid}-${names++}`;
      const fleet = fixture.clients.map(
        (redis) => new LocalFirstInflight({ redis, name, ...options }),
      );
      const held: { guard: InflightGuard; key: number; n: number }[] = [];
      const truth = new Map<number, number>();
      const syncAll = async () => {
        await fleet[0].flush();
        await fleet[1].flush();
        await fleet[0].flush();
      };
      for (const { process: p, key, n, release, twice, sync } of ops) {
        held.push({ guard: fleet[p].acquire(`k${key}`, n), key, n });
        truth.set(key, (truth.get(key) ?? 0) + n);
        if (release < held.length) {
          const [gone] = held.splice(release, 1);
          gone.guard.release();
          if (twice) gone.guard.release();
          truth.set(gone.key, (truth.get(gone.key) as number) - gone.n);
        }
        if (sync) await syncAll();
      }
      await syncAll();
      for (const [key, count] of truth) {
        for (const inflight of fleet) assert.equal(inflight.estimate(`k${key}`), count);
      }
      for (const { guard } of held) guard.release();
      await syncAll();
      for (let k = 0; k < 5; k++)
        for (const inflight of fleet) assert.equal(inflight.estimate(`k${k}`), 0);
      for (const inflight of fleet) inflight.close();
    }),
    { numRuns: 30 },
  );
});

test('tryAcquire decides in process over the fleet as of the last sync; Redis gone, it goes on and says stale', async () => {
  const own = await RedisServer.start();
  const redis = await own.client({ failWhenDown: true });
  const name = `gate-${process.pid}`;
  const a = new LocalFirstInflight({ redis, name, ...options, timeoutMs: 300 });
  const b = new LocalFirstInflight({ redis, name, ...options, timeoutMs: 300 });
  try {
    const held = [a.tryAcquire('origin', 4), a.tryAcquire('origin', 4, 2)];
    assert.ok(held.every((guard) => guard !== null));
    assert.equal(b.tryAcquire('origin', 4, 2)?.count, 2, 'b has not seen a yet');
    await a.flush();
    await b.flush();
    assert.equal(b.estimate('origin'), 5);
    assert.equal(b.tryAcquire('origin', 4), null, 'now it has: 5 held, limit 4');
    await a.flush(); // a sees b's 2
    await own.stop('SIGKILL');
    const stale = once(a, 'stale');
    await assert.rejects(a.flush());
    await stale;
    assert.equal(a.status.stale, true);
    for (const guard of held) guard?.release();
    assert.equal(a.estimate('origin'), 2, "b's 2, as last seen");
  } finally {
    a.close();
    b.close();
    closeClient(redis);
    await own.stop();
  }
});

test('a process killed while holding: the next sync after its lease takes its share back', async () => {
  const name = `killed-lfi-${process.pid}`;
  const child = await fleetChild(
    fixture.server.port,
    `const inflight = new hotcount.LocalFirstInflight({ redis, name: ${JSON.stringify(name)}, secret: new Uint8Array(16).fill(52), width: 256, depth: 3, syncMs: 100, leaseMs: 300 });
     for (let i = 0; i < 5; i++) inflight.acquire('origin');
     await inflight.flush();`,
  );
  const survivor = new LocalFirstInflight({ redis: fixture.clients[0], name, ...options });
  const mine = survivor.acquire('origin', 2);
  await survivor.flush();
  assert.equal(survivor.estimate('origin'), 7);
  child.kill('SIGKILL');
  await once(child, 'exit');
  await sleep(450);
  await survivor.flush(); // renews its own lease: the survivor was within it
  assert.equal(survivor.estimate('origin'), 2);
  mine.release();
  await survivor.flush();
  assert.equal(survivor.estimate('origin'), 0);
  survivor.close();
});

test('inflightLimit middleware over a LocalFirstInflight: 503 for what another process holds; total and bound for status pages', async () => {
  const { inflightLimit } = await import('../../src/http/index.js');
  const { listen } = await import('../helpers/http.js');
  const name = `http-${process.pid}-${names++}`;
  const fleet = fixture.clients.map((redis) => new LocalFirstInflight({ redis, name, ...options }));
  const limit = inflightLimit({ key: 'header:x-api-key', limit: 2, inflight: fleet[1] });
  const { server, url } = await listen((req, res) => limit(req, res, () => res.end('ok')));
  const get = (key: string) => fetch(url, { headers: { 'x-api-key': key } });
  try {
    // The key the header gives (http/client-key.ts): the header's name, then its value.
    const key = 'x-api-key:customer-1';
    const elsewhere = [fleet[0].acquire(key), fleet[0].acquire(key)];
    assert.equal((await get('customer-1')).status, 200, 'not yet synced');
    await fleet[0].flush();
    await fleet[1].flush();
    assert.equal(fleet[1].total, 2);
    assert.equal(fleet[1].errorBound, (2 * Math.E) / fleet[1].width);
    const refused = await get('customer-1');
    assert.equal(refused.status, 503);
    assert.equal(refused.headers.get('content-type'), 'application/problem+json');
    assert.equal((await get('customer-2')).status, 200, 'another key passes');
    for (const guard of elsewhere) guard.release();
    await fleet[0].flush();
    await fleet[1].flush();
    assert.equal((await get('customer-1')).status, 200);
    assert.equal(fleet[1].total, 0, 'every response ended: nothing held');
    assert.throws(() => inflightLimit({ limit: 2, inflight: fleet[1], width: 64 } as never), {
      name: 'RangeError',
      message: /width cannot be given beside it/,
    });
    assert.throws(() => inflightLimit({ limit: 2, inflight: {} } as never), {
      name: 'TypeError',
      message: /inflight must be an InflightCounter/,
    });
  } finally {
    server.close();
    for (const inflight of fleet) inflight.close();
  }
});
