/**
 * One server of the http suite, in a process of its own (so that autocannon, in the suite's
 * process, does not share its event loop): `node http-server.js <case>`. Listens on a free
 * loopback port, prints `{ "port": N }`, and serves `hello` until killed. Every limiter allows
 * every request (1e9 a minute), so each does the same work: count and decide.
 */
import { createServer, type IncomingMessage, type RequestListener, type Server } from 'node:http';
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

export const HTTP_CASES = [
  'node:http',
  'node:http + rateLimit',
  'express + rateLimit',
  'express + express-rate-limit',
  'fastify + hotcount plugin',
  'fastify + @fastify/rate-limit',
  'koa',
  'koa + rateLimit',
  'koa + koa-ratelimit',
  'hono',
  'hono + rateLimit',
  'hono + hono-rate-limiter',
  'nest',
  'nest + SketchThrottlerStorage',
  'nest + ThrottlerStorageService',
  'nest + a no-op storage',
] as const;
export type HttpCase = (typeof HTTP_CASES)[number];

const LIMIT = 1_000_000_000;
const WINDOW_MS = 60_000;

function listen(handler: RequestListener | Server): void {
  const server = typeof handler === 'function' ? createServer(handler) : handler;
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1', () => {
    const address = server.address();
    process.stdout.write(
      `${JSON.stringify({ port: typeof address === 'object' ? address?.port : 0 })}\n`,
    );
  });
}

async function main(which: HttpCase): Promise<void> {
  switch (which) {
    case 'node:http':
      return listen((_req, res) => res.end('hello'));
    case 'node:http + rateLimit': {
      const limit = rateLimit({ limit: LIMIT, windowMs: WINDOW_MS });
      return listen((req, res) => limit(req, res, () => res.end('hello')));
    }
    case 'express + rateLimit':
    case 'express + express-rate-limit': {
      const app = express();
      app.use(
        which === 'express + rateLimit'
          ? rateLimit({ limit: LIMIT, windowMs: WINDOW_MS })
          : expressRateLimit({
              limit: LIMIT,
              windowMs: WINDOW_MS,
              standardHeaders: 'draft-8',
              legacyHeaders: false,
            }),
      );
      app.get('/', (_req, res) => {
        res.send('hello');
      });
      return listen(app);
    }
    case 'fastify + hotcount plugin':
    case 'fastify + @fastify/rate-limit': {
      const app = Fastify();
      if (which === 'fastify + hotcount plugin') {
        await app.register(hotcount, { rate: { limit: LIMIT, windowMs: WINDOW_MS } });
      } else {
        await app.register(fastifyRateLimit, { max: LIMIT, timeWindow: WINDOW_MS });
      }
      app.get('/', async () => 'hello');
      await app.listen({ port: 0, host: '127.0.0.1' });
      const address = app.server.address();
      process.stdout.write(
        `${JSON.stringify({ port: typeof address === 'object' ? address?.port : 0 })}\n`,
      );
      return;
    }
    case 'koa':
    case 'koa + rateLimit':
    case 'koa + koa-ratelimit': {
      const app = new Koa();
      app.silent = true; // a load generator's closed connections (EPIPE) are not the server's faults
      if (which === 'koa + rateLimit') app.use(koaLimit({ limit: LIMIT, windowMs: WINDOW_MS }));
      if (which === 'koa + koa-ratelimit') {
        app.use(koaRateLimit({ driver: 'memory', db: new Map(), duration: WINDOW_MS, max: LIMIT }));
      }
      app.use(async (ctx) => {
        ctx.body = 'hello';
      });
      return listen(app.callback());
    }
    case 'hono':
    case 'hono + rateLimit':
    case 'hono + hono-rate-limiter': {
      const app = new Hono();
      if (which === 'hono + rateLimit') app.use(honoLimit({ limit: LIMIT, windowMs: WINDOW_MS }));
      if (which === 'hono + hono-rate-limiter') {
        // Its MemoryStore (the default), keyed by the client address as hotcount's is.
        app.use(
          honoRateLimiter({
            limit: LIMIT,
            windowMs: WINDOW_MS,
            standardHeaders: 'draft-7',
            keyGenerator: (c) =>
              (c.env as { incoming: IncomingMessage }).incoming.socket.remoteAddress ?? '',
          }),
        );
      }
      app.get('/', (c) => c.text('hello'));
      return listen(getRequestListener(app.fetch));
    }
    case 'nest':
    case 'nest + SketchThrottlerStorage':
    case 'nest + ThrottlerStorageService':
    case 'nest + a no-op storage': {
      const storages = {
        nest: 'none',
        'nest + SketchThrottlerStorage': 'hotcount',
        'nest + ThrottlerStorageService': 'default',
        'nest + a no-op storage': 'no-op',
      } as const;
      const storage = storages[which];
      const server = await nestApp(storage, LIMIT, WINDOW_MS);
      const address = server.address();
      process.stdout.write(
        `${JSON.stringify({ port: typeof address === 'object' ? address?.port : 0 })}\n`,
      );
      return;
    }
  }
}

const which = process.argv[2] as HttpCase;
if (!HTTP_CASES.includes(which)) {
  throw new RangeError(`case must be one of ${HTTP_CASES.join(', ')}; got ${which}`);
}
await main(which);
