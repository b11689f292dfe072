import assert from 'node:assert/strict';
import { once } from 'node:events';
import { test } from 'node:test';
import fc from 'fast-check';
import { RedisRateLimiter } from '../../src/redis/index.js';
import { closeClient, RedisServer, redisForFile, retried } from '../helpers/redis.js';

const secret = new Uint8Array(16).fill(50);
const fixture = redisForFile(2);
let names = 0;

test('local-first: checks never touch Redis; a fleet that syncs between checks keeps every key within limit per aligned window', async () => {
  const step = fc.record({
    key: fc.integer({ min: 0, max: 20 }),
    cost: fc.integer({ min: 0, max: 3 }),
    process: fc.integer({ min: 0, max: 1 }),
    advance: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 400 })),
  });
  await fc.assert(
    fc.asyncProperty(
      fc.array(step, { maxLength: 60 }),
      fc.integer({ min: 1, max: 5 }),
      async (steps, limit) => {
        let now = 2_000_000_000 + 11;
        const options = {
          name: `fleet-${process.pid}-${names++}`,
          secret,
          width: 8,
          depth: 2,
          limit,
          windowMs: 1000,
          now: () => now,
          localFirst: { syncMs: 3_600_000 },
        };
        const fleet = [0, 1].map(
          (i) => new RedisRateLimiter({ redis: fixture.clients[i], ...options }),
        );
        // What passed, per key and aligned window, over the whole fleet.
        const passed = new Map<string, number>();
        for (const { key, cost, process: p, advance } of steps) {
          now += advance;
          const decision = fleet[p].checkLocal(`k${key}`, cost);
          if (decision.allowed && cost > 0) {
            const at = `${key}@${Math.floor(now / 1000)}`;
            passed.set(at, (passed.get(at) ?? 0) + cost);
            assert.ok((passed.get(at) as number) <= limit, `${at} passed ${passed.get(at)}`);
          }
          // Both push and pull before the next check: the fleet then decides as one limiter.
          await fleet[p].flush();
          await fleet[1 - p].flush();
        }
        await Promise.all(fleet.map((limiter) => limiter.close()));
      },
    ),
    { numRuns: 40 },
  );
});

test('local-first: thousands of checks, no Redis command until the sync; one sync carries them all', async () => {
  const limiter = new RedisRateLimiter({
    redis: fixture.clients[0],
    name: `quiet-${process.pid}`,
    secret,
    limit: 1_000_000,
    windowMs: 60_000,
    localFirst: { syncMs: 3_600_000 },
  });
  const stats = async () =>
    Number(/total_commands_processed:(\d+)/.exec(await fixture.inspector.info('stats'))?.[1]);
  const first = await stats();
  for (let i = 0; i < 5000; i++)
    assert.equal(limiter.checkLocal(`client-${i % 100}`).allowed, true);
  const second = await stats();
  assert.equal(second - first, 1, 'only the INFO call itself');
  await limiter.flush();
  // Another process, in direct mode, reads the same windows.
  const direct = new RedisRateLimiter({
    redis: fixture.clients[1],
    name: `quiet-${process.pid}`,
    secret,
    limit: 1_000_000,
    windowMs: 60_000,
  });
  const seen = await direct.check('client-7', 0);
  assert.ok(1_000_000 - seen.remaining >= 50, `client-7 counted ${1_000_000 - seen.remaining}`);
  await limiter.close();
});

test('local-first with Redis gone: checks answer at once, never throw; stale, the event, the policy; counts reach Redis once it is back', async () => {
  const own = await RedisServer.start(['--appendonly', 'yes', '--appendfsync', 'always']);
  const redis = await own.client({ failWhenDown: true });
  const options = {
    secret,
    width: 64,
    depth: 3,
    limit: 1000,
    windowMs: 3_600_000,
    localFirst: { syncMs: 3_600_000 },
    timeoutMs: 300,
  };
  const local = new RedisRateLimiter({ redis, name: 'away', ...options });
  const closed = new RedisRateLimiter({ redis, name: 'away', ...options, onStale: 'closed' });
  const open = new RedisRateLimiter({ redis, name: 'away', ...options, onStale: 'open' });
  try {
    for (let i = 0; i < 30; i++) local.checkLocal('hot');
    await local.flush();
    await own.stop('SIGKILL');
    const stale = once(local, 'stale');
    for (let i = 0; i < 30; i++) assert.equal(local.checkLocal('hot').allowed, true);
    await assert.rejects(local.flush());
    await stale;
    assert.equal(local.status.stale, true);
    assert.ok(local.status.error instanceof Error);
    // 'local' goes on deciding from what this process knows: 60 of 1000 used.
    assert.equal(local.checkLocal('hot', 0).remaining, 940);
    await assert.rejects(closed.flush());
    await assert.rejects(open.flush());
    assert.equal(closed.checkLocal('fresh').allowed, false);
    assert.equal(open.checkLocal('hot', 100).allowed, true);
    await own.restart();
    const synced = once(local, 'sync');
    await retried(() => local.flush()); // the client reconnects in its own time
    await synced;
    assert.equal(local.status.stale, false);
    await open.flush();
    const { localFirst, ...direct } = options;
    const reader = new RedisRateLimiter({ redis, name: 'away', ...direct });
    // Redis holds 60 from 'local' (30 before the kill, 30 while away) and the 100 that 'open'
    // let through while stale, each counted once; 'closed' counted nothing.
    assert.equal((await reader.check('hot', 0)).remaining, 1000 - 160);
    assert.equal((await reader.check('fresh', 0)).remaining, 1000);
  } finally {
    await Promise.all([local, closed, open].map((l) => l.close().catch(() => {})));
    closeClient(redis);
    await own.stop();
  }
});

test('rateLimit middleware with a local-first limiter: the fleet limit over HTTP, the draft fields, 429', async () => {
  const { rateLimit } = await import('../../src/http/index.js');
  const { listen } = await import('../helpers/http.js');
  const options = {
    name: `http-${process.pid}`,
    secret,
    limit: 3,
    windowMs: 3_600_000,
    localFirst: { syncMs: 3_600_000 },
  };
  const fleet = [0, 1].map((i) => new RedisRateLimiter({ redis: fixture.clients[i], ...options }));
  const servers = await Promise.all(
    fleet.map((limiter) => {
      const limit = rateLimit({ name: 'fleet', key: 'header:x-api-key', limiter: limiter.local });
      return listen((req, res) => limit(req, res, () => res.end('ok')));
    }),
  );
  try {
    const get = async (url: string) => {
      const response = await fetch(url, { headers: { 'x-api-key': 'customer-1' } });
      await response.text();
      return response;
    };
    assert.equal((await get(servers[0].url)).status, 200);
    assert.equal((await get(servers[0].url)).status, 200);
    await fleet[0].flush();
    await fleet[1].flush();
    const third = await get(servers[1].url);
    assert.equal(third.status, 200);
    assert.match(third.headers.get('ratelimit') ?? '', /^"fleet";r=0;t=\d+$/);
    const fourth = await get(servers[1].url);
    assert.equal(fourth.status, 429, 'the other server saw the first two');
    assert.ok(Number(fourth.headers.get('retry-after')) >= 1);
    assert.throws(() => rateLimit({ limiter: fleet[0].local, limit: 5 } as never), {
      name: 'RangeError',
      message: /limit cannot be given beside it/,
    });
  } finally {
    for (const server of servers) server.server.close();
    await Promise.all(fleet.map((limiter) => limiter.close()));
  }
});
