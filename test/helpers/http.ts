/** Real servers for the HTTP tests: node:http on a free loopback port. */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type RequestListener, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { type AddressKey, ipKey, type Key } from '../../src/index.js';

/** A server on a free loopback port, for `handler` (an Express app too); closed by the caller. */
export async function listen(
  handler: RequestListener,
): Promise<{ server: Server; url: string; port: number }> {
  const server = createServer(handler);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return { server, url: `http://127.0.0.1:${port}`, port };
}

/** The key the limits count a client on loopback under: its address, as an AddressKey. */
export const LOOPBACK = ipKey('127.0.0.1') as AddressKey;

/** Waits (up to 2 s) for `limit`'s count of the loopback client to come back to `count`. */
export async function settles(
  limit: { inflight: { estimate(key: Key): number } },
  count: number,
): Promise<void> {
  for (let i = 0; i < 200 && limit.inflight.estimate(LOOPBACK) !== count; i++) await sleep(10);
  assert.equal(limit.inflight.estimate(LOOPBACK), count);
}

/**
 * A GET of `path` on a connection of its own: the status, or 'reset' when the connection is
 * cut; for '/hang' the client gives up after 50 ms.
 */
export function sendAlone(port: number, path: string): Promise<string> {
  return new Promise<string>((resolve) => {
    const req = request({ host: '127.0.0.1', port, path, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(`${res.statusCode}`));
    });
    req.on('error', () => resolve('reset'));
    req.end();
    if (path === '/hang') setTimeout(() => req.destroy(), 50);
  });
}

/** A refusal's problem details (RFC 9457), as the limits send them. */
export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
}

/**
 * The problem details of `response`, after checking what every refusal of the limits carries:
 * the status, application/problem+json, and the same status in the body.
 */
export async function problemOf(response: Response, status: number): Promise<Problem> {
  assert.equal(response.status, status);
  assert.equal(response.headers.get('content-type'), 'application/problem+json');
  const problem = (await response.json()) as Problem;
  assert.equal(problem.status, status);
  return problem;
}
