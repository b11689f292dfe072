/**
 * HonoRateLimiterStore in hono-rate-limiter's middleware, in a real Hono app on
 * @hono/node-server, and against hono-rate-limiter's own MemoryStore, call for call.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { serve } from '@hono/node-server';
import fc from 'fast-check';
import { Hono } from 'hono';
import { MemoryStore, rateLimiter } from 'hono-rate-limiter';
import { HonoRateLimiterStore } from '../../src/hono/index.js';

const secret = new Uint8Array(16).fill(61);

test('hono-rate-limiter with HonoRateLimiterStore limits as with its own store, its headers included', async () => {
  const app = new Hono();
  const store = new HonoRateLimiterStore({ secret });
  app.use(
    rateLimiter({
      windowMs: 60_000,
      limit: 2,
      standardHeaders: 'draft-7',
      keyGenerator: (c) => c.req.header('x-client') ?? 'none',
      store,
    }),
  );
  app.get('/', (c) => c.text('ok'));
  const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' });
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  const get = (client: string) =>
    fetch(`http://127.0.0.1:${port}/`, { headers: { 'x-client': client } });
  try {
    const first = await get('c1');
    assert.equal(first.status, 200);
    assert.match(String(first.headers.get('ratelimit')), /limit=2, remaining=1, reset=\d+/);
    assert.equal((await get('c1')).status, 200);
    const refused = await get('c1');
    assert.equal(refused.status, 429);
    assert.equal((await get('c2')).status, 200, 'another client has its own window');
    await store.resetKey('c1');
    assert.equal((await get('c1')).status, 200, 'resetKey lets a client start over');
  } finally {
    server.close();
  }
});

/**
 * The same calls on this store and on hono-rate-limiter's MemoryStore, on one clock that the
 * test moves: this store's `now`, and Date.now, which the MemoryStore reads (replaced for the
 * property's run only).
 */
const ops = fc.array(
  fc.record({
    kind: fc.constantFrom('increment', 'increment', 'increment', 'decrement', 'resetKey', 'get'),
    key: fc.nat(11),
    after: fc.oneof(fc.integer({ min: 0, max: 10 }), fc.integer({ min: 0, max: 300 })),
  }),
  { maxLength: 200 },
);

for (const capacity of [undefined, 8]) {
  test(
    capacity === undefined
      ? "per-client windows: the same totalHits and resetTime as hono-rate-limiter's MemoryStore, call for call"
      : "clients pushing each other out of a table of 8: a count never under hono-rate-limiter's MemoryStore's",
    () => {
      const realNow = Date.now;
      try {
        fc.assert(
          fc.property(fc.integer({ min: 100, max: 1000 }), ops, (windowMs, steps) => {
            let clock = 1_700_000_000_000;
            Date.now = () => clock;
            const theirs = new MemoryStore();
            theirs.init({ windowMs } as Parameters<MemoryStore['init']>[0]);
            const ours = new HonoRateLimiterStore({
              secret,
              now: () => clock,
              ...(capacity === undefined ? {} : { capacity }),
            });
            ours.init({ windowMs });
            try {
              for (const { kind, key, after } of steps) {
                clock += after;
                const name = `client-${key}`;
                if (kind === 'increment') {
                  const mine = ours.increment(name);
                  const { totalHits, resetTime } = theirs.increment(name);
                  if (capacity === undefined) {
                    assert.equal(mine.totalHits, totalHits);
                    assert.equal(mine.resetTime.getTime(), resetTime?.getTime());
                  } else {
                    assert.ok(mine.totalHits >= totalHits, `${mine.totalHits} < ${totalHits}`);
                  }
                } else if (kind === 'decrement') {
                  ours.decrement(name);
                  theirs.decrement(name);
                } else if (kind === 'resetKey') {
                  ours.resetKey(name);
                  theirs.resetKey(name);
                } else if (capacity === undefined) {
                  const mine = ours.get(name);
                  const info = theirs.get(name);
                  // Theirs answers an ended window too; this store, as express-rate-limit 8.7's
                  // MemoryStore, answers nothing once it ended.
                  const running = info !== undefined && (info.resetTime?.getTime() ?? 0) > clock;
                  assert.equal(mine?.totalHits, running ? info.totalHits : undefined);
                }
              }
            } finally {
              theirs.shutdown();
            }
          }),
          { numRuns: 200 },
        );
      } finally {
        Date.now = realNow;
      }
    },
  );
}
