/**
 * One server of the http suite, in a process of its own (so that autocannon, in the suite's
 * process, does not share its event loop): `node http-server.js <case>`. Listens on a free
 * loopback port, prints `{ "port": N }`, and serves `hello` until killed. Every limiter allows
 * every request (1e9 a minute), so each does the same work: count and decide.
 */
import { createServer, type RequestListener, type Server } from 'node:http';
import fastifyRateLimit from '@fastify/rate-limit';
import express from 'express';
import { rateLimit as expressRateLimit } from 'express-rate-limit';
import Fastify from 'fastify';
import hotcount from '../src/http/fastify.js';
import { rateLimit } from '../src/http/index.js';

export const HTTP_CASES = [
  'node:http',
  'node:http + rateLimit',
  'express + rateLimit',
  'express + express-rate-limit',
  'fastify + hotcount plugin',
  'fastify + @fastify/rate-limit',
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
  }
}

const which = process.argv[2] as HttpCase;
if (!HTTP_CASES.includes(which)) {
  throw new RangeError(`case must be one of ${HTTP_CASES.join(', ')}; got ${which}`);
}
await main(which);
