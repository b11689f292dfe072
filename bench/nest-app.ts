/**
 * The Nest application of the http suites (Nest's own default, the Express platform): one route
 * answering `hello`, with @nestjs/throttler's guard on the default storage, on
 * SketchThrottlerStorage, or with no throttler. The decorators are applied by hand (this
 * repository compiles without experimentalDecorators). The no-op storage lets every request through
 * and keeps nothing: what the guard costs before any storage does anything.
 */
import 'reflect-metadata';
import type { Server } from 'node:http';
import { Controller, Get, Module } from '@nestjs/common';
import { APP_GUARD, NestFactory } from '@nestjs/core';
import { ThrottlerGuard, ThrottlerModule } from '@nestjs/throttler';
import { SketchThrottlerStorage } from '../src/nest/index.js';

export type NestStorage = 'none' | 'default' | 'hotcount' | 'no-op';

/** A storage that counts nothing: every request is the first. */
const noOpStorage = {
  async increment() {
    return { totalHits: 1, timeToExpire: 1, isBlocked: false, timeToBlockExpire: 0 };
  },
};

class Hello {
  hello() {
    return 'hello';
  }
}
Get()(
  Hello.prototype,
  'hello',
  Object.getOwnPropertyDescriptor(Hello.prototype, 'hello') as PropertyDescriptor,
);
Controller()(Hello);

/**
 * The app with `storage`, `limit` requests per `ttlMs` (a block as long, the guard's default),
 * clients named by `tracker` (the guard's default is the address); listening on loopback.
 */
export async function nestApp(
  storage: NestStorage,
  limit: number,
  ttlMs: number,
  tracker?: (req: Record<string, unknown>) => string,
): Promise<Server> {
  class AppModule {}
  const throttled = {
    imports: [
      ThrottlerModule.forRoot({
        throttlers: [{ ttl: ttlMs, limit }],
        ...(tracker === undefined ? {} : { getTracker: tracker }),
        ...(storage === 'hotcount' ? { storage: new SketchThrottlerStorage() } : {}),
        ...(storage === 'no-op' ? { storage: noOpStorage } : {}),
      }),
    ],
    providers: [{ provide: APP_GUARD, useClass: ThrottlerGuard }],
  };
  Module({ controllers: [Hello], ...(storage === 'none' ? {} : throttled) })(AppModule);
  const app = await NestFactory.create(AppModule, { logger: false });
  await app.listen(0, '127.0.0.1');
  const server = app.getHttpServer() as Server;
  server.keepAliveTimeout = 60_000;
  return server;
}
