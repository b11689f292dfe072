/**
 * hotcount/hono in real Hono apps over real sockets, on the runtime that runs this file: Node
 * (@hono/node-server), Bun (Bun.serve) or Deno (Deno.serve), each the server a Hono user runs
 * there and each putting the client's address in `c.env` its own way.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Hono } from 'hono';
import { inflightLimit, rateLimit } from '../../src/hono/index.js';
import { LOOPBACK, problemOf, settles } from '../helpers/http.js';

const secret = new Uint8Array(16).fill(59);
const CLIENT = LOOPBACK;

interface Served {
  url: string;
  close(): Promise<void>;
}

interface BunLike {
  serve(options: object): { port: number; stop(force: boolean): void };
}
interface DenoLike {
  serve(
    options: object,
    handler: (request: Request, info: unknown) => Response | Promise<Response>,
  ): { addr: { port: number }; shutdown(): Promise<void> };
}

/** `app` on a free loopback port, served as this runtime serves Hono. */
async function serve(app: Hono): Promise<Served> {
  const { Bun, Deno } = globalThis as { Bun?: BunLike; Deno?: DenoLike };
  if (Bun !== undefined) {
    const server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: app.fetch });
    return { url: `http://127.0.0.1:${server.port}`, close: async () => server.stop(true) };
  }
  if (Deno !== undefined) {
    const server = Deno.serve({ port: 0, hostname: '127.0.0.1', onListen() {} }, app.fetch);
    return { url: `http://127.0.0.1:${server.addr.port}`, close: () => server.shutdown() };
  }
  const { serve: serveNode } = await import('@hono/node-server');
  const server = serveNode({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' });
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise((resolve) => {
        (server as unknown as { closeAllConnections(): void }).closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

test('Hono rateLimit: the draft fields on every response, 429 with Retry-After and problem+json over the limit, the handler not run', async () => {
  let clock = 1_000_000;
  const app = new Hono();
  app.use(rateLimit({ limit: 2, windowMs: 60_000, name: 'api', secret, now: () => clock }));
  let ran = 0;
  app.get('/', (c) => {
    ran++;
    return c.text('ok');
  });
  // A handler that makes its own Response keeps the fields too.
  app.get('/raw', () => new Response('raw'));
  const served = await serve(app);
  try {
    const first = await fetch(served.url);
    assert.equal(first.status, 200);
    assert.equal(await first.text(), 'ok');
    assert.equal(first.headers.get('ratelimit-policy'), '"api";q=2;w=60');
    assert.match(String(first.headers.get('ratelimit')), /^"api";r=1;t=\d+$/);
    const raw = await fetch(`${served.url}/raw`);
    assert.equal(await raw.text(), 'raw');
    assert.match(String(raw.headers.get('ratelimit')), /^"api";r=0;t=\d+$/);
    const refused = await fetch(served.url);
    assert.ok(Number(refused.headers.get('retry-after')) >= 1);
    assert.equal(refused.headers.get('ratelimit-policy'), '"api";q=2;w=60');
    const problem = await problemOf(refused, 429);
    assert.equal(problem.title, 'Too Many Requests');
    assert.match(problem.detail, /"api"/);
    assert.equal(ran, 1, 'a refused request never reaches the handler');
    clock += 120_000;
    assert.equal((await fetch(served.url)).status, 200);
  } finally {
    await served.close();
  }
});

test('Hono: two limits append their members, per path; functions receive c', async () => {
  const app = new Hono();
  const seen: string[] = [];
  app.use(rateLimit({ limit: 5, windowMs: 60_000, name: 'wide', secret }));
  app.use(
    '/api/*',
    rateLimit({
      limit: 1,
      windowMs: 60_000,
      name: 'per-customer',
      secret,
      key: (c) => `customer:${c.req.header('x-customer')}`,
      skip: (c) => c.req.path === '/api/health',
      onLimit: (c, decision) => seen.push(`${c.req.path} ${decision.limit}`),
    }),
  );
  app.get('*', (c) => c.text(c.req.path));
  const served = await serve(app);
  const get = (path: string, customer: string) =>
    fetch(`${served.url}${path}`, { headers: { 'x-customer': customer } });
  try {
    const first = await get('/api/a', 'c1');
    assert.equal(first.status, 200);
    assert.equal(first.headers.get('ratelimit-policy'), '"wide";q=5;w=60, "per-customer";q=1;w=60');
    assert.equal((await get('/api/a', 'c1')).status, 429);
    assert.equal((await get('/api/a', 'c2')).status, 200, 'another customer has its own quota');
    const health = await get('/api/health', 'c1');
    assert.equal(health.status, 200, 'skipped by the per-customer limit');
    assert.equal(health.headers.get('ratelimit-policy'), '"wide";q=5;w=60');
    const outside = await get('/home', 'c1');
    assert.equal(outside.status, 200, 'the per-customer limit covers /api/* only');
    assert.deepEqual(seen, ['/api/a 1']);
  } finally {
    await served.close();
  }
});

test("Hono: the client's address from the runtime's server; trustProxy reads X-Forwarded-For through the trusted hops", async () => {
  const app = new Hono();
  const byPeer = rateLimit({ limit: 1, windowMs: 60_000, secret });
  const behind = rateLimit({ limit: 1, windowMs: 60_000, secret, trustProxy: 1 });
  app.get('/peer', byPeer, (c) => c.text('ok'));
  app.get('/behind', behind, (c) => c.text('ok'));
  const served = await serve(app);
  const from = (path: string, forwarded: string) =>
    fetch(`${served.url}${path}`, { headers: { 'x-forwarded-for': forwarded } });
  try {
    assert.equal((await from('/peer', '203.0.113.9')).status, 200);
    assert.equal((await from('/peer', '203.0.113.10')).status, 429, 'the header is not trusted');
    assert.equal(byPeer.limiter.check(CLIENT).allowed, false, 'counted under 127.0.0.1');
    assert.equal((await from('/behind', '203.0.113.9, 198.51.100.1')).status, 200);
    assert.equal((await from('/behind', '192.0.2.1, 198.51.100.1')).status, 429);
    assert.equal((await from('/behind', '203.0.113.9, 198.51.100.2')).status, 200);
  } finally {
    await served.close();
  }
});

test('Hono: no address in c.env (app.request) is a 500 that says so, never every client as one; a throwing key function too', async () => {
  const app = new Hono();
  const errors: string[] = [];
  app.onError((error, c) => {
    errors.push(error.message);
    return c.text('failed', 500);
  });
  app.get('/ip', rateLimit({ limit: 100, windowMs: 60_000, secret }), (c) => c.text('ok'));
  app.get(
    '/key',
    rateLimit({
      limit: 100,
      windowMs: 60_000,
      secret,
      key: () => {
        throw new Error('no customer');
      },
    }),
    (c) => c.text('ok'),
  );
  app.get(
    '/header',
    rateLimit({ limit: 1, windowMs: 60_000, secret, key: 'header:x-api-key' }),
    (c) => c.text('ok'),
  );
  assert.equal((await app.request('/ip')).status, 500);
  assert.equal((await app.request('/key')).status, 500);
  assert.match(errors[0], /found no client address/);
  assert.match(errors[1], /no customer/);
  // Keyed by a header, no address is needed while the header is there.
  const headers = { 'x-api-key': 'k1' };
  assert.equal((await app.request('/header', { headers })).status, 200);
  assert.equal((await app.request('/header', { headers })).status, 429);
});

test('Hono inflightLimit: 503 over the limit; back to zero on every path: no body, read to the end, streamed, cancelled by the client, handler threw', async () => {
  const limit = inflightLimit({ limit: 2, secret, retryAfterS: 4, name: 'slots' });
  const app = new Hono();
  const waiting: (() => void)[] = [];
  const streamedWhile: number[] = [];
  app.onError((_error, c) => c.text('handled', 500));
  app.use(limit);
  app.get('/held', async (c) => {
    await new Promise<void>((resolve) => waiting.push(resolve));
    return c.text('done');
  });
  app.get('/empty', (c) => c.body(null, 204));
  app.get('/text', (c) => c.text('ok'));
  app.get('/throw', () => {
    throw new Error('handler failed');
  });
  app.get('/stream', () => {
    const encoder = new TextEncoder();
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        await sleep(10);
        streamedWhile.push(limit.inflight.estimate(CLIENT));
        if (sent++ < 3) controller.enqueue(encoder.encode(`part ${sent}\n`));
        else controller.close();
      },
    });
    return new Response(body);
  });
  app.get('/endless', () => {
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        await sleep(5);
        controller.enqueue(new TextEncoder().encode('more\n'));
      },
    });
    return new Response(body);
  });
  const served = await serve(app);
  try {
    const held = [fetch(`${served.url}/held`), fetch(`${served.url}/held`)];
    await settles(limit, 2);
    const refused = await fetch(`${served.url}/text`);
    assert.equal(refused.headers.get('retry-after'), '4');
    const problem = await problemOf(refused, 503);
    assert.match(problem.detail, /"slots": 2/);
    for (const finish of waiting) finish();
    for (const response of await Promise.all(held)) assert.equal(await response.text(), 'done');
    await settles(limit, 0);

    assert.equal((await fetch(`${served.url}/empty`)).status, 204);
    await settles(limit, 0);
    assert.equal(await (await fetch(`${served.url}/text`)).text(), 'ok');
    await settles(limit, 0);
    assert.equal((await fetch(`${served.url}/throw`)).status, 500);
    await settles(limit, 0);
    assert.equal(await (await fetch(`${served.url}/stream`)).text(), 'part 1\npart 2\npart 3\n');
    assert.ok(
      streamedWhile.length >= 3 && streamedWhile.every((n) => n === 1),
      'held while streaming',
    );
    await settles(limit, 0);
    // The client reads a little of an endless body and goes away: the runtime cancels it.
    const controller = new AbortController();
    const endless = await fetch(`${served.url}/endless`, { signal: controller.signal });
    const reader = (endless.body as ReadableStream<Uint8Array>).getReader();
    await reader.read();
    assert.equal(limit.inflight.estimate(CLIENT), 1, 'held while the body is read');
    controller.abort();
    await reader.cancel().catch(() => {});
    await settles(limit, 0);
  } finally {
    await served.close();
  }
});

test('Hono: bad options are a TypeError or RangeError naming the option, when the middleware is made', () => {
  assert.throws(() => rateLimit(null as never), { name: 'TypeError', message: /options/ });
  assert.throws(() => rateLimit({ limit: 0, windowMs: 1000 }), {
    name: 'RangeError',
    message: /limit/,
  });
  assert.throws(() => rateLimit({ limit: 1, windowMs: 1000, key: 'cookie:x' as never }), {
    name: 'TypeError',
    message: /key/,
  });
  assert.throws(() => rateLimit({ limit: 1, windowMs: 1000, ipv6Prefix: 129 }), {
    name: 'RangeError',
    message: /ipv6Prefix/,
  });
  assert.throws(() => inflightLimit({ limit: 1, dryRun: 'no' as never }), {
    name: 'TypeError',
    message: /dryRun/,
  });
  assert.throws(() => inflightLimit({ limit: 0 }), { name: 'RangeError', message: /limit/ });
});
