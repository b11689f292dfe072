/**
 * SketchThrottlerStorage in real Nest applications (@nestjs/core, @nestjs/testing) on the Express
 * and the Fastify adapter, over real sockets: the throttler's guard, decorators, named throttlers
 * and headers, with this storage in the default's place. The decorators are applied by hand (this
 * repository compiles without experimentalDecorators); the storage's clock is injected, so that
 * nothing waits on the wall clock.
 */
import 'reflect-metadata';
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Controller, Get, type INestApplication, Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { ExpressAdapter } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import { SkipThrottle, Throttle, ThrottlerGuard, ThrottlerModule } from '@nestjs/throttler';
import { SketchThrottlerStorage } from '../../src/nest/index.js';

const secret = new Uint8Array(16).fill(67);

/** Applies method decorators to `target.prototype[name]`, as `@decorator` would. */
function decorate(target: { prototype: object }, name: string, ...decorators: MethodDecorator[]) {
  const descriptor = Object.getOwnPropertyDescriptor(target.prototype, name) as PropertyDescriptor;
  for (const decorator of decorators.reverse()) decorator(target.prototype, name, descriptor);
}

class Routes {
  open() {
    return { route: 'open' };
  }
  strict() {
    return { route: 'strict' };
  }
  free() {
    return { route: 'free' };
  }
}
decorate(Routes, 'open', Get('open'));
// A route's own limit and ttl for the default throttler (its blockDuration the throttler's).
decorate(Routes, 'strict', Get('strict'), Throttle({ default: { limit: 1, ttl: 10_000 } }));
decorate(Routes, 'free', Get('free'), SkipThrottle({ default: true, hourly: true }));
Controller()(Routes);

/** A Nest app on `adapter` with two throttlers over one SketchThrottlerStorage on `clock`. */
async function start(
  adapter: 'express' | 'fastify',
  clock: { now: number },
): Promise<{ app: INestApplication; url: string }> {
  class AppModule {}
  Module({
    imports: [
      ThrottlerModule.forRoot({
        throttlers: [
          { name: 'default', ttl: 60_000, limit: 3, blockDuration: 30_000 },
          { name: 'hourly', ttl: 3_600_000, limit: 5 },
        ],
        // Clients named by a header: every test request comes from 127.0.0.1.
        getTracker: (req: Record<string, unknown>) =>
          String((req.headers as Record<string, unknown>)['x-client'] ?? 'none'),
        storage: new SketchThrottlerStorage({ secret, now: () => clock.now }),
      }),
    ],
    controllers: [Routes],
    providers: [{ provide: APP_GUARD, useClass: ThrottlerGuard }],
  })(AppModule);
  const fixture = await Test.createTestingModule({ imports: [AppModule] }).compile();
  const app = fixture.createNestApplication(
    adapter === 'express' ? new ExpressAdapter() : new FastifyAdapter(),
    { logger: false },
  );
  await app.listen(0, '127.0.0.1');
  return { app, url: (await app.getUrl()).replace('[::1]', '127.0.0.1') };
}

for (const adapter of ['express', 'fastify'] as const) {
  test(`Nest on ${adapter}: the limit, its headers, 429 with Retry-After, the block, the start-over`, async () => {
    const clock = { now: 1_900_000_000_000 };
    const { app, url } = await start(adapter, clock);
    const get = (path: string, client = 'alice') =>
      fetch(`${url}/${path}`, { headers: { 'x-client': client } });
    try {
      for (let i = 1; i <= 3; i++) {
        const response = await get('open');
        assert.equal(response.status, 200);
        assert.deepEqual(await response.json(), { route: 'open' });
        assert.equal(response.headers.get('x-ratelimit-limit'), '3');
        assert.equal(response.headers.get('x-ratelimit-remaining'), String(3 - i));
        assert.equal(response.headers.get('x-ratelimit-reset'), '60');
        assert.equal(response.headers.get('x-ratelimit-limit-hourly'), '5');
        assert.equal(response.headers.get('x-ratelimit-remaining-hourly'), String(5 - i));
      }
      const refused = await get('open');
      assert.equal(refused.status, 429);
      assert.equal(refused.headers.get('retry-after'), '30', 'blockDuration, in seconds');
      assert.match(JSON.stringify(await refused.json()), /ThrottlerException: Too Many Requests/);
      assert.equal((await get('open', 'bob')).status, 200, 'another client has its own count');
      clock.now += 29_000;
      assert.equal((await get('open')).status, 429, 'blocked for blockDuration');
      assert.equal((await get('open')).headers.get('retry-after'), '1');
      clock.now += 1_000;
      // The block has ended: the client starts over (its hits of the last minute forgotten), as
      // with the default storage. The hourly throttler goes on counting: requests the default
      // throttler refused never reached it (the guard stops at the first refusal).
      const again = await get('open');
      assert.equal(again.status, 200);
      assert.equal(again.headers.get('x-ratelimit-remaining'), '2');
      assert.equal(again.headers.get('x-ratelimit-remaining-hourly'), '1');
      assert.equal((await get('open')).headers.get('x-ratelimit-remaining-hourly'), '0');
      const hourly = await get('open');
      assert.equal(hourly.status, 429, 'the hourly throttler refuses its sixth request');
      assert.equal(hourly.headers.get('retry-after-hourly'), '3600');
    } finally {
      await app.close();
    }
  });

  test(`Nest on ${adapter}: a route's own @Throttle, and @SkipThrottle`, async () => {
    const clock = { now: 1_900_000_000_000 };
    const { app, url } = await start(adapter, clock);
    const get = (path: string) => fetch(`${url}/${path}`, { headers: { 'x-client': 'carol' } });
    try {
      const first = await get('strict');
      assert.equal(first.status, 200);
      assert.equal(first.headers.get('x-ratelimit-limit'), '1');
      const second = await get('strict');
      assert.equal(second.status, 429);
      // No blockDuration on the route: the throttler's own (30 s) applies.
      assert.equal(second.headers.get('retry-after'), '30');
      for (let i = 0; i < 10; i++) {
        const free = await get('free');
        assert.equal(free.status, 200);
        assert.equal(free.headers.get('x-ratelimit-limit'), null, 'no throttler runs on it');
        assert.equal(free.headers.get('x-ratelimit-limit-hourly'), null);
      }
      assert.equal((await get('open')).status, 200, "each route's count is its own");
    } finally {
      await app.close();
    }
  });
}

test('SketchThrottlerStorage: bad options and arguments, a TypeError or RangeError naming them', async () => {
  assert.throws(() => new SketchThrottlerStorage({ widht: 10 } as never), /widht/);
  assert.throws(() => new SketchThrottlerStorage({ capacity: 0 }), {
    name: 'RangeError',
    message: /capacity/,
  });
  assert.throws(() => new SketchThrottlerStorage({ width: -1 }), {
    name: 'RangeError',
    message: /width/,
  });
  assert.throws(() => new SketchThrottlerStorage({ now: 5 } as never), {
    name: 'TypeError',
    message: /now/,
  });
  assert.throws(() => new SketchThrottlerStorage(null as never), {
    name: 'TypeError',
    message: /options/,
  });
  const storage = new SketchThrottlerStorage({ secret });
  const cases: [unknown[], string, RegExp][] = [
    [[1, 1000, 1, 0, 'default'], 'TypeError', /key/],
    [['k', '1000', 1, 0, 'default'], 'TypeError', /ttl/],
    [['k', 0, 1, 0, 'default'], 'RangeError', /ttl/],
    [['k', Number.NaN, 1, 0, 'default'], 'RangeError', /ttl/],
    [['k', 1000, -1, 0, 'default'], 'RangeError', /limit/],
    [['k', 1000, Number.NaN, 0, 'default'], 'RangeError', /limit/],
    [['k', 1000, 1, -5, 'default'], 'RangeError', /blockDuration/],
    [['k', 1000, 1, Number.POSITIVE_INFINITY, 'default'], 'RangeError', /blockDuration/],
    [['k', 1000, 1, 0, undefined], 'TypeError', /throttlerName/],
  ];
  for (const [args, name, message] of cases) {
    await assert.rejects(
      (storage.increment as (...a: unknown[]) => Promise<unknown>)(...args),
      { name, message },
      JSON.stringify(args),
    );
  }
  // A ttl resolved per request cannot make it allocate without end: 64 (throttler, ttl) pairs.
  for (let ttl = 1000; ttl < 1064; ttl++) await storage.increment('k', ttl, 5, 0, 'default');
  await assert.rejects(storage.increment('k', 2000, 5, 0, 'default'), {
    name: 'RangeError',
    message: /ttl must be one of the 64/,
  });
  assert.ok(storage.memoryBytes < 200 * 1024 * 1024);
});
