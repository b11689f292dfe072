import assert from 'node:assert/strict';
import { test } from 'node:test';
import express from 'express';
import { rateLimit } from 'express-rate-limit';
import fc from 'fast-check';
import { ExpressRateLimitStore } from '../../src/http/index.js';
import { listen } from '../helpers/http.js';

const secret = new Uint8Array(16).fill(44);

/** An Express app limited by express-rate-limit on `store`; each request's key is its x-client header. */
async function app(store: ExpressRateLimitStore, options: Record<string, unknown> = {}) {
  const server = express();
  const limiter = rateLimit({
    windowMs: 60_000,
    limit: 3,
    standardHeaders: 'draft-8',
    legacyHeaders: false,
    keyGenerator: (req) => String(req.headers['x-client']),
    store,
    ...options,
  });
  server.use(limiter);
  server.get('/', (_req, res) => {
    res.send('ok');
  });
  server.get('/fails', (_req, res) => {
    res.status(500).send('no');
  });
  const listening = await listen(server);
  const hit = (client: string, path = '/') =>
    fetch(`${listening.url}${path}`, { headers: { 'x-client': client } });
  return { ...listening, limiter, hit };
}

test('express-rate-limit with ExpressRateLimitStore limits as with its own store, its headers included', async () => {
  const { server, hit } = await app(new ExpressRateLimitStore({ secret }));
  try {
    for (let i = 0; i < 3; i++) {
      const response = await hit('a');
      assert.equal(response.status, 200);
      const field = response.headers.get('ratelimit') ?? '';
      assert.match(field, new RegExp(`r=${2 - i}; t=\\d+`));
      const t = Number(/t=(\d+)/.exec(field)?.[1]);
      assert.ok(t >= 1 && t <= 60, `t=${t}`);
    }
    assert.equal((await hit('a')).status, 429);
    assert.equal((await hit('b')).status, 200);
  } finally {
    server.close();
  }
});

test('resetKey lets one client start over and leaves the others where they were', async () => {
  const { server, hit, limiter } = await app(new ExpressRateLimitStore({ secret }));
  try {
    for (let i = 0; i < 3; i++) await hit('a');
    for (let i = 0; i < 3; i++) await hit('b');
    assert.equal((await hit('a')).status, 429);
    await limiter.resetKey('a');
    for (let i = 0; i < 3; i++) assert.equal((await hit('a')).status, 200);
    assert.equal((await hit('a')).status, 429);
    assert.equal((await hit('b')).status, 429);
  } finally {
    server.close();
  }
});

test('skipFailedRequests: a failed request is taken back through decrement', async () => {
  const { server, hit } = await app(new ExpressRateLimitStore({ secret }), {
    skipFailedRequests: true,
  });
  try {
    for (let i = 0; i < 5; i++) assert.equal((await hit('a', '/fails')).status, 500);
    for (let i = 0; i < 3; i++) assert.equal((await hit('a')).status, 200);
    assert.equal((await hit('a')).status, 429);
  } finally {
    server.close();
  }
});

test('counts start over when the window of the clock turns; resetTime is its end', () => {
  let now = 120_500;
  const store = new ExpressRateLimitStore({ secret, now: () => now });
  store.init({ windowMs: 1000 });
  assert.deepEqual(store.increment('a'), { totalHits: 1, resetTime: new Date(121_000) });
  assert.equal(store.increment('a').totalHits, 2);
  store.resetKey('a');
  assert.equal(store.get('a').totalHits, 0);
  now = 121_000;
  assert.deepEqual(store.increment('a'), { totalHits: 1, resetTime: new Date(122_000) });
  store.resetAll();
  assert.equal(store.get('a').totalHits, 0);
});

test('property: resetKey and decrement never make any key count less than it should, with evictions', () => {
  const op = fc.record({
    kind: fc.constantFrom('increment', 'increment', 'increment', 'decrement', 'resetKey', 'tick'),
    key: fc.integer({ min: 0, max: 15 }),
  });
  fc.assert(
    fc.property(
      fc.array(op, { maxLength: 300 }),
      fc.integer({ min: 0, max: 4 }),
      fc.boolean(),
      (ops, maxAdjusted, conservative) => {
        let now = 0;
        const store = new ExpressRateLimitStore({
          secret,
          width: 4,
          depth: 2,
          maxAdjusted,
          conservative,
          now: () => now,
        });
        store.init({ windowMs: 100 });
        // What each key should count in the current window: hits since the window began or
        // since its reset, less its decrements since then.
        let owed = new Map<string, number>();
        for (const { kind, key } of ops) {
          const k = `client-${key}`;
          if (kind === 'tick') {
            now += 37;
            if (Math.floor(now / 100) !== Math.floor((now - 37) / 100)) owed = new Map();
            continue;
          }
          if (kind === 'increment') {
            owed.set(k, (owed.get(k) ?? 0) + 1);
            const { totalHits } = store.increment(k);
            assert.ok(totalHits >= (owed.get(k) ?? 0), `${k}: ${totalHits} < ${owed.get(k)}`);
          } else if (kind === 'decrement') {
            owed.set(k, (owed.get(k) ?? 0) - 1);
            store.decrement(k);
          } else {
            owed.set(k, 0);
            store.resetKey(k);
          }
          for (let other = 0; other < 16; other++) {
            const o = `client-${other}`;
            const { totalHits } = store.get(o);
            assert.ok(totalHits >= 0);
            assert.ok(totalHits >= (owed.get(o) ?? 0), `${o}: ${totalHits} < ${owed.get(o)}`);
          }
        }
      },
    ),
    { numRuns: 300 },
  );
});

test('bad options are refused, naming the option; no window before init', () => {
  assert.throws(() => new ExpressRateLimitStore({ widht: 10 } as never), {
    name: 'TypeError',
    message: /widht is not an option/,
  });
  assert.throws(() => new ExpressRateLimitStore({ maxAdjusted: -1 }), {
    name: 'RangeError',
    message: /maxAdjusted/,
  });
  assert.throws(() => new ExpressRateLimitStore({ shared: true } as never), {
    name: 'TypeError',
    message: /shared/,
  });
  const store = new ExpressRateLimitStore();
  assert.throws(() => store.increment('a'), { name: 'TypeError', message: /init/ });
  assert.throws(() => store.init({ windowMs: 0 }), { name: 'RangeError', message: /windowMs/ });
});
