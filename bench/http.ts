/**
 * The middleware under load (issue 12): autocannon on loopback against a server in a child
 * process of its own (http-server.ts), one client key (127.0.0.1), 50 connections, keep-alive,
 * `DURATION_S` seconds per run. Each pair alternates run by run, 5 rounds, and its ratio is
 * taken within each round; p50 and p99 latency beside.
 */
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import type { HttpCase } from './http-server.js';
import { type Load, loadRatioRow } from './load-rows.js';
import type { BenchOptions, Row } from './measure.js';
import { startServer, stopServer } from './server-process.js';

const SERVER = fileURLToPath(new URL('./http-server.js', import.meta.url));
export const DURATION_S = 4;
export const CONNECTIONS = 50;

/** Loads the server of `which`, run by `runtime` (this Node by default). */
export async function load(which: HttpCase, runtime = process.execPath): Promise<Load> {
  const server = await startServer(SERVER, [which], runtime);
  const { port } = server;
  try {
    // A short warm-up, so that each server runs optimized code when measured.
    await autocannon({ url: `http://127.0.0.1:${port}/`, connections: CONNECTIONS, duration: 1 });
    const result = await autocannon({
      url: `http://127.0.0.1:${port}/`,
      connections: CONNECTIONS,
      duration: DURATION_S,
    });
    if (result.non2xx > 0 || result.errors > 0) {
      throw new Error(`${which}: ${result.non2xx} non-2xx responses, ${result.errors} errors`);
    }
    return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99 };
  } finally {
    await stopServer(server);
  }
}

/** `a` against `b`, alternating run by run; their servers run on `runtime` (this Node). */
export async function pair(
  options: BenchOptions,
  a: HttpCase,
  b: HttpCase,
  caseName: string,
  target: number | null,
  runtime = process.execPath,
): Promise<Row> {
  const { runs, log } = options;
  const loads = new Map<HttpCase, Load[]>([
    [a, []],
    [b, []],
  ]);
  for (let round = 0; round < runs; round++) {
    for (const which of round % 2 === 0 ? [a, b] : [b, a])
      loads.get(which)?.push(await load(which, runtime));
    const [la, lb] = [a, b].map((which) => loads.get(which)?.[round] as Load);
    log(
      `    round ${round + 1}/${runs}: ${a} ${la.rps.toFixed(0)} req/s, ${b} ${lb.rps.toFixed(0)} req/s`,
    );
  }
  const of = (which: HttpCase) => [which, loads.get(which) ?? []] as const;
  return loadRatioRow(caseName, of(a), of(b), target, 'runs');
}

export async function httpSuite(options: BenchOptions): Promise<Row[]> {
  options.log(
    `  http: autocannon, ${CONNECTIONS} connections, ${DURATION_S} s per run, one client`,
  );
  return [
    await pair(
      options,
      'node:http + rateLimit',
      'node:http',
      '12.1 node:http hello world + rateLimit vs without',
      0.9,
    ),
    await pair(
      options,
      'express + rateLimit',
      'express + express-rate-limit',
      '12.2 Express + rateLimit vs Express + express-rate-limit (memory store, draft-8 headers)',
      1,
    ),
    await pair(
      options,
      'fastify + hotcount plugin',
      'fastify + @fastify/rate-limit',
      '12.2 Fastify + the hotcount plugin vs Fastify + @fastify/rate-limit',
      1,
    ),
    await pair(
      options,
      'koa + rateLimit',
      'koa + koa-ratelimit',
      '36.1 Koa + rateLimit vs Koa + koa-ratelimit (memory driver)',
      1,
    ),
    await pair(
      options,
      'koa + rateLimit',
      'koa',
      '36.1 Koa + rateLimit vs Koa without a limiter',
      0.9,
    ),
    await pair(
      options,
      'hono + rateLimit',
      'hono + hono-rate-limiter',
      '36.2 Hono + rateLimit vs Hono + hono-rate-limiter (MemoryStore), @hono/node-server',
      1,
    ),
    await pair(
      options,
      'hono + rateLimit',
      'hono',
      '36.2 Hono + rateLimit vs Hono without a limiter, @hono/node-server',
      0.9,
    ),
    await pair(
      options,
      'nest + SketchThrottlerStorage',
      'nest + ThrottlerStorageService',
      '36.4 Nest (Express platform) + @nestjs/throttler on SketchThrottlerStorage vs on its default storage',
      1,
    ),
    await pair(
      options,
      'nest + SketchThrottlerStorage',
      'nest',
      '36.4 Nest (Express platform) + @nestjs/throttler on SketchThrottlerStorage vs Nest without a throttler',
      0.9,
    ),
    await pair(
      options,
      'nest + SketchThrottlerStorage',
      'nest + a no-op storage',
      '36.4 where it goes: @nestjs/throttler on SketchThrottlerStorage vs its guard over a storage that counts nothing',
      null,
    ),
  ];
}
