/**
 * One server of the http-keys suite, in a process of its own, keyed by the `x-client` request
 * header (so that one load generator on loopback can be a million clients):
 * `node --expose-gc http-keys-server.js <case> <limit> <windowMs>`. Listens on a free loopback
 * port, prints `{ "port": N }`, and answers the parent's `'rss'` IPC message with its resident
 * set size after a full collection.
 */
import { createServer } from 'node:http';
import fastifyRateLimit from '@fastify/rate-limit';
import { getRequestListener } from '@hono/node-server';
import express from 'express';
import { rateLimit as expressRateLimit } from 'express-rate-limit';
import Fastify from 'fastify';
import { Hono } from 'hono';
import { rateLimiter as honoRateLimiter } from 'hono-rate-limiter';
import Koa from 'koa';
import koaRateLimit from 'koa-ratelimit';
import { rateLimit as honoLimit } from '../src/hono/index.js';
import hotcount from '../src/http/fastify.js';
import { rateLimit } from '../src/http/index.js';
import { rateLimit as koaLimit } from '../src/koa/index.js';
import { nestApp } from './nest-app.js';

export const KEY_CASES = [
  'node:http',
  'node:http + rateLimit',
  'express + rateLimit',
  'express + express-rate-limit',
  'fastify + hotcount plugin',
  'fastify + @fastify/rate-limit',
  'koa + rateLimit',
  'koa + koa-ratelimit',
  'hono + rateLimit',
  'hono + hono-rate-limiter',
  'nest + SketchThrottlerStorage',
  'nest + ThrottlerStorageService',
  'nest + a no-op storage',
  'nest',
] as const;
export type KeyCase = (typeof KEY_CASES)[number];

const HEADER = 'x-client';

function ready(port: number): void {
  process.send?.({ port });
}

async function main(which: KeyCase, limit: number, windowMs: number): Promise<void> {
  const clientOf = (headers: Record<string, unknown>) => String(headers[HEADER]);
  switch (which) {
    case 'node:http': {
      const server = createServer((_req, res) => res.end('hello'));
      server.keepAliveTimeout = 60_000;
      server.listen(0, '127.0.0.1', () => ready((server.address() as { port: number }).port));
      return;
    }
    case 'node:http + rateLimit': {
      const limiter = rateLimit({ limit, windowMs, key: `header:${HEADER}` });
      const server = createServer((req, res) => limiter(req, res, () => res.end('hello')));
      server.keepAliveTimeout = 60_000;
      server.listen(0, '127.0.0.1', () => ready((server.address() as { port: number }).port));
      return;
    }
    case 'express + rateLimit':
    case 'express + express-rate-limit': {
      const app = express();
      app.use(
        which === 'express + rateLimit'
          ? rateLimit({ limit, windowMs, key: `header:${HEADER}` })
          : expressRateLimit({
              limit,
              windowMs,
              standardHeaders: 'draft-8',
              legacyHeaders: false,
              keyGenerator: (req) => clientOf(req.headers),
              validate: false,
            }),
      );
      app.get('/', (_req, res) => {
        res.send('hello');
      });
      const server = app.listen(0, '127.0.0.1', () =>
        ready((server.address() as { port: number }).port),
      );
      server.keepAliveTimeout = 60_000;
      return;
    }
    case 'fastify + hotcount plugin':
    case 'fastify + @fastify/rate-limit': {
      const app = Fastify();
      if (which === 'fastify + hotcount plugin') {
        await app.register(hotcount, { rate: { limit, windowMs, key: `header:${HEADER}` } });
      } else {
        // Its defaults otherwise: the LocalStore, an LRU of 5,000 clients.
        await app.register(fastifyRateLimit, {
          max: limit,
          timeWindow: windowMs,
          keyGenerator: (request) => clientOf(request.headers),
        });
      }
      app.get('/', async () => 'hello');
      await app.listen({ port: 0, host: '127.0.0.1' });
      ready((app.server.address() as { port: number }).port);
      return;
    }
    case 'koa + rateLimit':
    case 'koa + koa-ratelimit': {
      const app = new Koa();
      app.silent = true; // a load generator's closed connections (EPIPE) are not the server's faults
      app.use(
        which === 'koa + rateLimit'
          ? koaLimit({ limit, windowMs, key: `header:${HEADER}` })
          : koaRateLimit({
              driver: 'memory',
              db: new Map(),
              duration: windowMs,
              max: limit,
              id: (ctx) => clientOf(ctx.headers),
            }),
      );
      app.use(async (ctx) => {
        ctx.body = 'hello';
      });
      const server = app.listen(0, '127.0.0.1', () =>
        ready((server.address() as { port: number }).port),
      );
      server.keepAliveTimeout = 60_000;
      return;
    }
    case 'hono + rateLimit':
    case 'hono + hono-rate-limiter': {
      const app = new Hono();
      app.use(
        which === 'hono + rateLimit'
          ? honoLimit({ limit, windowMs, key: `header:${HEADER}` })
          : honoRateLimiter({
              limit,
              windowMs,
              standardHeaders: 'draft-7',
              keyGenerator: (c) => c.req.header(HEADER) ?? '',
            }),
      );
      app.get('/', (c) => c.text('hello'));
      const server = createServer(getRequestListener(app.fetch));
      server.keepAliveTimeout = 60_000;
      server.listen(0, '127.0.0.1', () => ready((server.address() as { port: number }).port));
      return;
    }
    case 'nest + SketchThrottlerStorage':
    case 'nest + ThrottlerStorageService':
    case 'nest + a no-op storage':
    case 'nest': {
      const storages = {
        'nest + SketchThrottlerStorage': 'hotcount',
        'nest + ThrottlerStorageService': 'default',
        'nest + a no-op storage': 'no-op',
        nest: 'none',
      } as const;
      const storage = storages[which];
      const server = await nestApp(storage, limit, windowMs, (req) =>
        clientOf(req.headers as Record<string, unknown>),
      );
      ready((server.address() as { port: number }).port);
      return;
    }
  }
}

process.on('message', (message) => {
  if (message !== 'rss') return;
  globalThis.gc?.();
  process.send?.(process.memoryUsage());
});

const [which, limit, windowMs] = [process.argv[2] as KeyCase, process.argv[3], process.argv[4]];
if (!KEY_CASES.includes(which)) {
  throw new RangeError(`case must be one of ${KEY_CASES.join(', ')}; got ${which}`);
}
await main(which, Number(limit), Number(windowMs));
