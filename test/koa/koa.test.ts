import assert from 'node:assert/strict';
import { once } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import Koa from 'koa';
import { type AddressKey, ipKey } from '../../src/index.js';
import { inflightLimit, rateLimit } from '../../src/koa/index.js';
import { LOOPBACK, problemOf, sendAlone, settles } from '../helpers/http.js';

const secret = new Uint8Array(16).fill(53);
const CLIENT = LOOPBACK;

/** A Koa app on a free loopback port; closed by the caller. */
async function serve(app: Koa): Promise<{ server: Server; url: string; port: number }> {
  const server = app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return { server, url: `http://127.0.0.1:${port}`, port };
}

test('Koa rateLimit: the draft fields on every response, 429 with Retry-After and problem+json over the limit, the downstream not run', async () => {
  let clock = 1_000_000;
  const app = new Koa();
  app.use(rateLimit({ limit: 2, windowMs: 60_000, name: 'api', secret, now: () => clock }));
  let ran = 0;
  app.use(async (ctx) => {
    ran++;
    ctx.body = 'ok';
  });
  const { server, url } = await serve(app);
  try {
    const first = await fetch(url);
    assert.equal(first.status, 200);
    assert.equal(await first.text(), 'ok');
    assert.equal(first.headers.get('ratelimit-policy'), '"api";q=2;w=60');
    assert.match(String(first.headers.get('ratelimit')), /^"api";r=1;t=\d+$/);
    assert.equal((await fetch(url)).status, 200);
    const refused = await fetch(url);
    assert.ok(Number(refused.headers.get('retry-after')) >= 1);
    assert.equal(refused.headers.get('ratelimit-policy'), '"api";q=2;w=60');
    const problem = await problemOf(refused, 429);
    assert.equal(problem.title, 'Too Many Requests');
    assert.match(problem.detail, /"api"/);
    assert.equal(ran, 2, 'a refused request never reaches the downstream middleware');
    // Two windows later (the injected clock), the client has its quota back.
    clock += 120_000;
    assert.equal((await fetch(url)).status, 200);
  } finally {
    server.close();
  }
});

test('Koa: two limits on one app append their members; the tighter refuses; functions receive ctx', async () => {
  const app = new Koa();
  const seen: string[] = [];
  app.use(rateLimit({ limit: 5, windowMs: 60_000, name: 'wide', secret }));
  app.use(
    rateLimit({
      limit: 1,
      windowMs: 60_000,
      name: 'per-customer',
      secret,
      key: (ctx) => `customer:${ctx.get('x-customer')}`,
      skip: (ctx) => ctx.path === '/health',
      onLimit: (ctx, decision) => seen.push(`${ctx.path} ${decision.limit}`),
    }),
  );
  app.use(async (ctx) => {
    ctx.body = ctx.path;
  });
  const { server, url } = await serve(app);
  const get = (path: string, customer: string) =>
    fetch(`${url}${path}`, { headers: { 'x-customer': customer } });
  try {
    const first = await get('/a', 'c1');
    assert.equal(first.status, 200);
    assert.equal(first.headers.get('ratelimit-policy'), '"wide";q=5;w=60, "per-customer";q=1;w=60');
    assert.match(
      String(first.headers.get('ratelimit')),
      /^"wide";r=4;t=\d+, "per-customer";r=0;t=\d+$/,
    );
    assert.equal((await get('/a', 'c1')).status, 429);
    assert.equal((await get('/a', 'c2')).status, 200, 'another customer has a quota of its own');
    const health = await get('/health', 'c1');
    assert.equal(health.status, 200, 'skipped by the per-customer limit');
    assert.equal(health.headers.get('ratelimit-policy'), '"wide";q=5;w=60');
    assert.deepEqual(seen, ['/a 1']);
  } finally {
    server.close();
  }
});

test('Koa: dryRun counts and calls onLimit but never refuses; header keys fall back to the client address', async () => {
  const app = new Koa();
  const refusedKeys: string[] = [];
  const limit = rateLimit({
    limit: 1,
    windowMs: 60_000,
    secret,
    dryRun: true,
    key: 'header:x-api-key',
    onLimit: (ctx) => refusedKeys.push(ctx.get('x-api-key') || 'none'),
  });
  app.use(limit);
  app.use(async (ctx) => {
    ctx.body = 'ok';
  });
  const { server, url } = await serve(app);
  try {
    for (let i = 0; i < 3; i++) {
      const response = await fetch(url, { headers: { 'x-api-key': 'k1' } });
      assert.equal(response.status, 200);
    }
    assert.equal((await fetch(url)).status, 200);
    assert.deepEqual(refusedKeys, ['k1', 'k1']);
    // Counted all the same (a refused check counts nothing more).
    assert.equal(limit.limiter.check('x-api-key:k1').allowed, false);
    assert.equal(limit.limiter.check(`ip:${String(CLIENT)}`).allowed, false);
  } finally {
    server.close();
  }
});

test('Koa: trustProxy takes the client from X-Forwarded-For through the trusted hops only', async () => {
  const app = new Koa();
  const limit = rateLimit({ limit: 1, windowMs: 60_000, secret, trustProxy: 1 });
  app.use(limit);
  app.use(async (ctx) => {
    ctx.body = 'ok';
  });
  const { server, url } = await serve(app);
  const from = (forwarded: string) => fetch(url, { headers: { 'x-forwarded-for': forwarded } });
  try {
    assert.equal((await from('203.0.113.9, 198.51.100.1')).status, 200);
    assert.equal((await from('192.0.2.1, 198.51.100.1')).status, 429, 'the same last hop');
    assert.equal((await from('203.0.113.9, 198.51.100.2')).status, 200);
    assert.equal(limit.limiter.check(ipKey('198.51.100.1') as AddressKey).allowed, false);
  } finally {
    server.close();
  }
});

test('Koa: a key function that throws goes to Koa error handling (500), never a pass', async () => {
  const app = new Koa();
  const errors: string[] = [];
  app.on('error', (error: Error) => errors.push(error.message));
  app.use(
    rateLimit({
      limit: 100,
      windowMs: 60_000,
      secret,
      key: (ctx) => {
        if (ctx.path === '/bad') return {} as never;
        throw new Error('no customer');
      },
    }),
  );
  let ran = 0;
  app.use(async (ctx) => {
    ran++;
    ctx.body = 'ok';
  });
  const { server, url } = await serve(app);
  try {
    assert.equal((await fetch(`${url}/throws`)).status, 500);
    assert.equal((await fetch(`${url}/bad`)).status, 500);
    assert.equal(ran, 0);
    assert.equal(errors.length, 2);
    assert.match(errors[0], /no customer/);
    assert.match(errors[1], /key function/);
  } finally {
    server.close();
  }
});

test('Koa inflightLimit: 503 over the limit; a held request counts until its response ends', async () => {
  const limit = inflightLimit({ limit: 2, secret, retryAfterS: 3, name: 'slots' });
  const app = new Koa();
  const waiting: (() => void)[] = [];
  app.use(limit);
  app.use(async (ctx) => {
    await new Promise<void>((resolve) => waiting.push(resolve));
    ctx.body = 'done';
  });
  const { server, url } = await serve(app);
  try {
    const held = [fetch(url), fetch(url)];
    await settles(limit, 2);
    const refused = await fetch(url);
    assert.equal(refused.headers.get('retry-after'), '3');
    const problem = await problemOf(refused, 503);
    assert.match(problem.detail, /"slots": 2/);
    assert.equal(limit.inflight.estimate(CLIENT), 2, 'a refusal holds nothing');
    for (const finish of waiting) finish();
    for (const response of await Promise.all(held)) assert.equal(await response.text(), 'done');
    await settles(limit, 0);
  } finally {
    server.close();
  }
});

test('Koa inflightLimit: back to zero on every path: finished, streamed, client aborted, downstream threw', {
  timeout: 30_000,
}, async () => {
  const limit = inflightLimit({ limit: 50, secret });
  const heldWhileStreaming: number[] = [];
  const app = new Koa();
  app.silent = true; // the thrown errors are the test's own
  app.use(limit);
  app.use(async (ctx) => {
    if (ctx.path === '/finish') ctx.body = 'ok';
    else if (ctx.path === '/throw') throw new Error('downstream failed');
    else if (ctx.path === '/reject') {
      await sleep(5);
      ctx.throw(418, 'teapot');
    } else if (ctx.path === '/stream') {
      // The body is sent after the middleware returned: the guard holds until its end.
      const body = new PassThrough();
      ctx.body = body;
      setTimeout(() => {
        heldWhileStreaming.push(limit.inflight.estimate(CLIENT));
        body.end('streamed');
      }, 30);
    } else {
      await sleep(2_000); // '/hang': the client gives up first
    }
  });
  const { server, port } = await serve(app);
  const send = (path: string) => sendAlone(port, path);
  try {
    assert.equal(await send('/finish'), '200');
    await settles(limit, 0);
    assert.equal(await send('/stream'), '200');
    assert.deepEqual(heldWhileStreaming, [1], 'held until the streamed body ends');
    await settles(limit, 0);
    assert.equal(await send('/throw'), '500');
    await settles(limit, 0);
    assert.equal(await send('/reject'), '418');
    await settles(limit, 0);
    assert.equal(await send('/hang'), 'reset');
    await settles(limit, 0);
    const paths = ['/finish', '/stream', '/throw', '/reject', '/hang'];
    await Promise.all(Array.from({ length: 40 }, (_, i) => send(paths[i % paths.length])));
    await settles(limit, 0);
    assert.equal(limit.inflight.sketch.total, 0);
  } finally {
    server.closeAllConnections();
    server.close();
  }
});

test('Koa: bad options are a TypeError or RangeError naming the option, when the middleware is made', () => {
  assert.throws(() => rateLimit(null as never), { name: 'TypeError', message: /options/ });
  assert.throws(() => rateLimit({ limit: 0, windowMs: 1000 }), {
    name: 'RangeError',
    message: /limit/,
  });
  assert.throws(() => rateLimit({ limit: 1, windowMs: 1000, key: 'cookie:x' as never }), {
    name: 'TypeError',
    message: /key/,
  });
  assert.throws(() => rateLimit({ limit: 1, windowMs: 1000, trustProxy: -1 }), {
    name: 'RangeError',
    message: /trustProxy/,
  });
  assert.throws(() => rateLimit({ limit: 1, windowMs: 1000, skip: 'yes' as never }), {
    name: 'TypeError',
    message: /skip/,
  });
  assert.throws(() => rateLimit({ limit: 1, windowMs: 1000, windw: 5 } as never), {
    name: 'TypeError',
    message: /windw/,
  });
  assert.throws(() => inflightLimit({ limit: 1.5 }), { name: 'RangeError', message: /limit/ });
  assert.throws(() => inflightLimit({ limit: 1, retryAfterS: 0 }), {
    name: 'RangeError',
    message: /retryAfterS/,
  });
  assert.throws(() => inflightLimit({ limit: 1, name: 'a"b' }), {
    name: 'RangeError',
    message: /name/,
  });
});
