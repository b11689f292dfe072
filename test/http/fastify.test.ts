import assert from 'node:assert/strict';
import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import Fastify from 'fastify';
import hotcount, { hotcount as named } from '../../src/http/fastify.js';

const secret = new Uint8Array(16).fill(41);

test('the plugin: RateLimit fields on every reply, 429 with problem+json over the limit; per-route limits and opt-out', async () => {
  assert.equal(named, hotcount);
  const app = Fastify();
  await app.register(hotcount, { rate: { limit: 2, windowMs: 60_000, name: 'api', secret } });
  app.get('/', async () => 'ok');
  app.get('/health', { config: { hotcount: false } }, async () => 'up');
  app.get(
    '/report',
    { config: { hotcount: { rate: { limit: 1, windowMs: 60_000, name: 'report', secret } } } },
    async () => 'report',
  );
  try {
    const first = await app.inject('/');
    assert.equal(first.statusCode, 200);
    assert.equal(first.headers['ratelimit-policy'], '"api";q=2;w=60');
    assert.match(String(first.headers.ratelimit), /^"api";r=1;t=\d+$/);
    assert.equal((await app.inject('/')).statusCode, 200);
    const refused = await app.inject('/');
    assert.equal(refused.statusCode, 429);
    assert.match(String(refused.headers['content-type']), /^application\/problem\+json/);
    assert.ok(Number(refused.headers['retry-after']) >= 1);
    assert.equal(refused.json().status, 429);
    // Opted out: no limit, no fields.
    for (let i = 0; i < 5; i++) {
      const health = await app.inject('/health');
      assert.equal(health.statusCode, 200);
      assert.equal(health.headers.ratelimit, undefined);
    }
    // Its own limiter: counts on its own (the plugin's limit is spent), limit 1.
    const report = await app.inject('/report');
    assert.equal(report.statusCode, 200);
    assert.equal(report.headers['ratelimit-policy'], '"report";q=1;w=60');
    assert.equal((await app.inject('/report')).statusCode, 429);
  } finally {
    await app.close();
  }
});

test('the plugin is encapsulated the Fastify way: registered in a child scope, it limits that scope only', async () => {
  const app = Fastify();
  await app.register(async (scope) => {
    await scope.register(hotcount, { rate: { limit: 1, windowMs: 60_000, secret } });
    scope.get('/limited', async () => 'ok');
  });
  app.get('/free', async () => 'ok');
  try {
    assert.equal((await app.inject('/limited')).statusCode, 200);
    assert.equal((await app.inject('/limited')).statusCode, 429);
    for (let i = 0; i < 3; i++) assert.equal((await app.inject('/free')).statusCode, 200);
  } finally {
    await app.close();
  }
});

test('inflight through Fastify: 503 over the limit; the guard comes back after replies, errors and aborted clients', async () => {
  const app = Fastify();
  await app.register(hotcount, { inflight: { limit: 1, secret, retryAfterS: 3 } });
  let release: () => void = () => {};
  app.get('/hold', () => new Promise<string>((resolve) => (release = () => resolve('done'))));
  app.get('/fail', async () => {
    throw new Error('boom');
  });
  app.get('/hang', () => new Promise<string>(() => {}));
  app.addHook('onError', async () => {});
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;
  // With a limit of 1, a guard that was not given back shows as a 503 on the next request.
  const statusOfFail = async () => (await fetch(`${url}/fail`)).status;
  try {
    const held = fetch(`${url}/hold`);
    await sleep(50);
    const refused = await fetch(`${url}/fail`);
    assert.equal(refused.status, 503);
    assert.equal(refused.headers.get('retry-after'), '3');
    release();
    assert.equal(await (await held).text(), 'done');
    await sleep(20);
    // Errors answered by Fastify's error handler give the guard back: 500s, never 503.
    for (let i = 0; i < 5; i++) assert.equal(await statusOfFail(), 500);
    // A client that gives up before the reply: the guard comes back when the socket closes.
    await new Promise<void>((resolve) => {
      const req = request({ host: '127.0.0.1', port, path: '/hang', agent: false });
      req.on('error', () => resolve());
      req.end();
      setTimeout(() => req.destroy(), 50);
    });
    await sleep(50);
    assert.equal(await statusOfFail(), 500);
  } finally {
    await app.close();
  }
});

test('a key function that throws reaches Fastify as an error (500), never a pass; bad options fail registration', async () => {
  const app = Fastify();
  let handled = 0;
  await app.register(hotcount, {
    rate: {
      limit: 10,
      windowMs: 1000,
      secret,
      key: () => {
        throw new Error('no tenant');
      },
    },
  });
  app.get('/', async () => {
    handled++;
    return 'ok';
  });
  const response = await app.inject('/');
  assert.equal(response.statusCode, 500);
  assert.equal(handled, 0);
  await app.close();

  const bad = Fastify();
  await assert.rejects(async () => bad.register(hotcount, { rate: { limit: 0, windowMs: 1000 } }), {
    name: 'RangeError',
    message: /limit/,
  });
  const typo = Fastify();
  await assert.rejects(async () => typo.register(hotcount, { rates: {} } as never), {
    name: 'TypeError',
    message: /rates is not an option/,
  });
});
