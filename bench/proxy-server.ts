/**
 * One process of the proxy suite (proxy.ts): `node proxy-server.js <case> [upstream URL]`.
 * Listens on a free loopback port, prints `{ "port": N }`, serves until SIGTERM.
 *
 * Upstreams answer `hello` (at once, or after 10 ms), or read a request body and answer one of
 * 64 KiB; on SIGTERM an upstream prints what connections it saw (`{ "opened", "peak" }`), so
 * that the suite can say how many each proxy opened. On SIGUSR2 any prints the CPU it has used
 * (`{ "cpuUs" }`).
 *
 * Proxies forward to the upstream URL: hotcount's (its limits allow every request, as in the
 * http suite, and hold an inflight place for each), node-http-proxy on a keep-alive agent,
 * @fastify/http-proxy as its README sets it up, and three bare forwarders, one per client Node
 * has (what the forwarding was chosen by: the same work, none of a proxy's care).
 */
import { Agent, createServer, type IncomingMessage, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import fastifyHttpProxy from '@fastify/http-proxy';
import Fastify from 'fastify';
import httpProxy from 'http-proxy';
import { type Dispatcher, Pool } from 'undici';
import { LimitingProxy } from '../src/proxy/index.js';

export const PROXY_CASES = [
  'upstream',
  'upstream slow',
  'upstream 64 KiB',
  'hotcount proxy',
  'hotcount proxy + limits',
  'http-proxy',
  '@fastify/http-proxy',
  'bare http.request',
  'bare undici request',
  'bare undici dispatch',
] as const;
export type ProxyCase = (typeof PROXY_CASES)[number];

/** The body each way in the 64 KiB case. */
export const BODY_BYTES = 64 * 1024;
const LIMIT = 1_000_000_000;
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'te']);

function ready(server: Server): void {
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1', () => {
    process.stdout.write(`${JSON.stringify({ port: (server.address() as AddressInfo).port })}\n`);
  });
}

/** An upstream: counts its connections and says them on SIGTERM. */
function upstream(server: Server): void {
  let open = 0;
  let opened = 0;
  let peak = 0;
  server.on('connection', (socket) => {
    opened++;
    peak = Math.max(peak, ++open);
    socket.once('close', () => open--);
  });
  process.on('SIGTERM', () => {
    process.stdout.write(`${JSON.stringify({ opened, peak })}\n`, () => process.exit(0));
  });
  ready(server);
}

/** Fields without the hop-by-hop ones (for the bare forwarders only). */
function endToEnd(raw: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < raw.length; i += 2) {
    if (!HOP_BY_HOP.has(raw[i].toLowerCase())) out.push(raw[i], raw[i + 1]);
  }
  return out;
}

function hasBody(req: IncomingMessage): boolean {
  return (
    req.headers['content-length'] !== undefined || req.headers['transfer-encoding'] !== undefined
  );
}

async function main(which: ProxyCase, target: string): Promise<void> {
  const url = new URL(target ?? 'http://127.0.0.1:1');
  if (!which.startsWith('upstream')) process.on('SIGTERM', () => process.exit(0));
  // The CPU this process has used so far, on demand: the suite reads it before and after a
  // run, and says the CPU each process spends on a request.
  process.on('SIGUSR2', () => {
    const { user, system } = process.cpuUsage();
    process.stdout.write(`${JSON.stringify({ cpuUs: user + system })}\n`);
  });
  switch (which) {
    case 'upstream':
      return upstream(createServer((_req, res) => res.end('hello')));
    case 'upstream slow':
      return upstream(createServer((_req, res) => setTimeout(() => res.end('hello'), 10)));
    case 'upstream 64 KiB': {
      const answer = Buffer.alloc(BODY_BYTES, 0x61);
      return upstream(
        createServer((req, res) => {
          let got = 0;
          req.on('data', (chunk: Buffer) => {
            got += chunk.length;
          });
          req.on('end', () => {
            if (got !== BODY_BYTES) res.statusCode = 400;
            res.end(answer);
          });
        }),
      );
    }
    case 'hotcount proxy':
    case 'hotcount proxy + limits': {
      const limits =
        which === 'hotcount proxy'
          ? []
          : [{ rate: { limit: LIMIT, windowMs: 60_000 }, inflight: LIMIT }];
      return ready(new LimitingProxy({ upstream: target, limits }).server);
    }
    case 'http-proxy': {
      const agent = new Agent({ keepAlive: true });
      const proxy = httpProxy.createProxyServer({ target, agent, xfwd: true });
      proxy.on('error', (_error, _req, res) => {
        if ('writeHead' in res && !res.headersSent) res.writeHead(502);
        res.end();
      });
      return ready(createServer((req, res) => proxy.web(req, res)));
    }
    case '@fastify/http-proxy': {
      const app = Fastify();
      await app.register(fastifyHttpProxy, { upstream: target });
      await app.listen({ port: 0, host: '127.0.0.1' });
      process.stdout.write(
        `${JSON.stringify({ port: (app.server.address() as AddressInfo).port })}\n`,
      );
      return;
    }
    case 'bare http.request': {
      const agent = new Agent({ keepAlive: true });
      return ready(
        createServer((req, res) => {
          const out = request({
            hostname: url.hostname,
            port: url.port,
            method: req.method,
            path: req.url,
            headers: endToEnd(req.rawHeaders),
            agent,
          });
          out.on('response', (incoming) => {
            res.writeHead(incoming.statusCode ?? 502, endToEnd(incoming.rawHeaders));
            incoming.pipe(res);
          });
          out.on('error', () => res.destroy());
          req.pipe(out);
        }),
      );
    }
    case 'bare undici request': {
      const pool = new Pool(url.origin);
      return ready(
        createServer(async (req, res) => {
          try {
            const answer = await pool.request({
              path: req.url ?? '/',
              method: req.method as Dispatcher.HttpMethod,
              headers: endToEnd(req.rawHeaders),
              body: hasBody(req) ? req : null,
            });
            const fields: string[] = [];
            for (const name in answer.headers) {
              if (!HOP_BY_HOP.has(name)) fields.push(name, String(answer.headers[name]));
            }
            res.writeHead(answer.statusCode, fields);
            answer.body.pipe(res);
          } catch {
            res.destroy();
          }
        }),
      );
    }
    case 'bare undici dispatch': {
      const pool = new Pool(url.origin);
      return ready(
        createServer((req, res) => {
          pool.dispatch(
            {
              path: req.url ?? '/',
              method: req.method as Dispatcher.HttpMethod,
              headers: endToEnd(req.rawHeaders),
              body: hasBody(req) ? req : null,
            },
            new BareHandler(res),
          );
        }),
      );
    }
  }
}

/**
 * undici's handler interface at its simplest: the least a dispatch forwarder does. The controller
 * form, as the proxy's (undici 8 takes no other).
 */
class BareHandler {
  constructor(private readonly res: import('node:http').ServerResponse) {}
  onRequestStart(): void {}
  onResponseStart(controller: Dispatcher.DispatchController, status: number): void {
    this.res.on('drain', () => controller.resume());
    const raw = controller.rawHeaders as Buffer[];
    const fields: string[] = [];
    for (let i = 0; i < raw.length; i += 2) {
      const name = raw[i].toString('latin1');
      if (!HOP_BY_HOP.has(name.toLowerCase())) fields.push(name, raw[i + 1].toString('latin1'));
    }
    this.res.writeHead(status, fields);
  }
  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (!this.res.write(chunk)) controller.pause();
  }
  onResponseEnd(): void {
    this.res.end();
  }
  onResponseError(): void {
    this.res.destroy();
  }
}

// Run as a process, not imported (proxy.ts takes BODY_BYTES from here).
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const which = process.argv[2] as ProxyCase;
  if (!PROXY_CASES.includes(which)) {
    throw new RangeError(`case must be one of ${PROXY_CASES.join(', ')}; got ${which}`);
  }
  await main(which, process.argv[3]);
}
