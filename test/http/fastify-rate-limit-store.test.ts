import assert from 'node:assert/strict';
import { test } from 'node:test';
import rateLimit from '@fastify/rate-limit';
import Fastify from 'fastify';
import { FastifyRateLimitStore } from '../../src/http/fastify.js';

const secret = new Uint8Array(16).fill(43);

/** An app limited by @fastify/rate-limit with `options`; each request's key is its x-client header. */
async function app(options: Record<string, unknown>) {
  const server = Fastify();
  await server.register(rateLimit, {
    max: 3,
    timeWindow: 60_000,
    keyGenerator: (request) => String(request.headers['x-client']),
    ...options,
  });
  server.get('/', async () => 'ok');
  server.get('/tight', { config: { rateLimit: { max: 1, timeWindow: 60_000 } } }, async () => 'ok');
  return server;
}

const hit = (server: Awaited<ReturnType<typeof app>>, client: string, url = '/') =>
  server.inject({ url, headers: { 'x-client': client } });

test('@fastify/rate-limit with FastifyRateLimitStore: the plugin limits as with its own store, headers and per-route limits included', async () => {
  const server = await app({ store: FastifyRateLimitStore.with({ secret }) });
  try {
    for (let i = 0; i < 3; i++) {
      const response = await hit(server, 'a');
      assert.equal(response.statusCode, 200);
      assert.equal(response.headers['x-ratelimit-remaining'], String(2 - i));
      const reset = Number(response.headers['x-ratelimit-reset']);
      assert.ok(reset >= 1 && reset <= 60, `reset ${reset}`);
    }
    assert.equal((await hit(server, 'a')).statusCode, 429);
    assert.equal((await hit(server, 'b')).statusCode, 200);
    // The route's own limit, counted by the route's own store (child).
    assert.equal((await hit(server, 'c', '/tight')).statusCode, 200);
    assert.equal((await hit(server, 'c', '/tight')).statusCode, 429);
    assert.equal((await hit(server, 'c')).statusCode, 200);
  } finally {
    await server.close();
  }
});

test('a client rotating through more keys than the LRU holds resets the others with LocalStore, never with FastifyRateLimitStore', async () => {
  const lru = await app({ cache: 100 });
  const sketch = await app({ store: FastifyRateLimitStore.with({ secret, width: 4096 }) });
  // A table of 16 clients, which the rotation overflows: the victim leaves it, and comes back
  // with what the sketches counted for it.
  const small = await app({ store: FastifyRateLimitStore.with({ secret, capacity: 16 }) });
  const aligned = await app({ store: FastifyRateLimitStore.with({ secret, windows: 'aligned' }) });
  try {
    const passed = async (server: typeof lru) => {
      for (let i = 0; i < 3; i++) await hit(server, 'victim-of-the-limit');
      // An attacker rotating through 200 keys.
      for (let i = 0; i < 200; i++) await hit(server, `rotating-${i}`);
      return (await hit(server, 'victim-of-the-limit')).statusCode;
    };
    assert.equal(await passed(lru), 200, 'the LRU forgot the client and let it through again');
    assert.equal(await passed(sketch), 429);
    assert.equal(await passed(small), 429);
    assert.equal(await passed(aligned), 429);
  } finally {
    await lru.close();
    await sketch.close();
    await small.close();
    await aligned.close();
  }
});

test('options it cannot honour are refused, not ignored', async () => {
  const server = Fastify();
  await assert.rejects(
    async () =>
      server.register(rateLimit, {
        max: 1,
        timeWindow: 1000,
        store: FastifyRateLimitStore.with({ windows: 'aligned' }),
        continueExceeding: true,
      }),
    { name: 'RangeError', message: /continueExceeding/ },
  );
  assert.throws(() => FastifyRateLimitStore.with({ windows: 'sliding' as never }), {
    name: 'RangeError',
    message: /windows/,
  });
  assert.throws(() => FastifyRateLimitStore.with({ capacity: 0 }), {
    name: 'RangeError',
    message: /capacity/,
  });
  assert.throws(() => FastifyRateLimitStore.with({ widht: 10 } as never), {
    name: 'TypeError',
    message: /widht is not an option/,
  });
});

test("a read of a key with no request in the window finds { current: 0, ttl: 0 }, as the plugin's LocalStore answers; one after a request finds it", async () => {
  const store = new FastifyRateLimitStore();
  const read = (key: string) =>
    new Promise<{ current: number; ttl: number } | undefined>((resolve, reject) =>
      store.read(
        key,
        (error, result) => (error === null ? resolve(result) : reject(error)),
        60_000,
      ),
    );
  assert.deepEqual(await read('never-seen'), { current: 0, ttl: 0 });
  await new Promise<void>((resolve) => store.incr('seen', () => resolve(), 60_000));
  const seen = await read('seen');
  assert.equal(seen?.current, 1);
  assert.ok(seen !== undefined && seen.ttl > 0 && seen.ttl <= 60_000, `ttl ${seen?.ttl}`);
  assert.deepEqual(await read('never-seen'), { current: 0, ttl: 0 }, 'a read counts nothing');
});
