/**
 * `hotcount proxy`: the limiting reverse proxy on the command line (see proxy/limiting-proxy.ts), run
 * from its arguments (proxy-args.ts), alone or in a fleet (proxy-fleet.ts), until SIGTERM.
 */
import { once } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createAdminServer } from '../proxy/admin.js';
import { createDemoUpstream } from '../proxy/demo-upstream.js';
import { LimitingProxy, type ProxyOptions } from '../proxy/limiting-proxy.js';
import { InputError, reason } from './failures.js';
import type { Address, ProxyRun } from './proxy-args.js';
import { connectFleet } from './proxy-fleet.js';

export { PROXY_USAGE, parseProxyArgs } from './proxy-args.js';

/** Listens on `address`; in the demo, a busy port gives way to a free one. */
async function listenOn(
  server: Server,
  address: Address,
  what: string,
  fallback: boolean,
): Promise<string> {
  for (;;) {
    server.listen(address.port, address.host);
    try {
      await once(server, 'listening');
    } catch (error) {
      if (
        fallback &&
        (error as NodeJS.ErrnoException).code === 'EADDRINUSE' &&
        address.port !== 0
      ) {
        process.stdout.write(`(port ${address.port} is busy: ${what} takes a free one)\n`);
        address = { ...address, port: 0 };
        continue;
      }
      throw new InputError(
        `cannot listen on ${address.host}:${address.port} for ${what}: ${reason(error)}`,
      );
    }
    const { port } = server.address() as AddressInfo;
    const host = address.host.includes(':') ? `[${address.host}]` : address.host;
    return `http://${host}:${port}`;
  }
}

function describeLimit(proxy: LimitingProxy): string[] {
  return proxy.limits.map((limit) => {
    const parts: string[] = [];
    const limiter = limit.rate?.limiter;
    if (limiter !== undefined) parts.push(`${limiter.limit} per ${limiter.windowMs} ms`);
    if (limit.inflight !== null) parts.push(`${limit.inflight.limit} in progress`);
    return `  limit "${limit.name}": ${parts.join(' and ')} per ${limit.keyKind}, under ${limit.prefix}`;
  });
}

/** Runs the proxy until SIGTERM or SIGINT, then shuts down gracefully. */
export async function runProxy(run: ProxyRun): Promise<void> {
  const options = run.options as ProxyOptions;
  let upstreamServer: Server | null = null;
  if (run.demo) {
    upstreamServer = createDemoUpstream();
    options.upstream = await listenOn(
      upstreamServer,
      { host: '127.0.0.1', port: 0 },
      'the demo upstream',
      false,
    );
  }
  const fleet = run.redis === null ? null : await connectFleet(run.redis, options);
  const proxy = new LimitingProxy(
    fleet === null
      ? options
      : { ...options, rateLimiter: fleet.rateLimiter, inflightCounter: fleet.inflightCounter },
  );
  const url = await listenOn(proxy.server, run.listen, 'the proxy', run.demo);
  const admin = run.admin === null ? null : createAdminServer(proxy);
  const adminUrl =
    admin === null || run.admin === null
      ? null
      : await listenOn(admin, run.admin, 'the status page', run.demo);
  const lines = [
    `hotcount proxy: ${url} -> ${run.demo ? 'the demo upstream ' : ''}${proxy.upstreamUrl}`,
    ...describeLimit(proxy),
  ];
  if (run.redis !== null && fleet !== null) {
    lines.push(
      `  limits shared through ${run.redis.url} (sync every ${run.redis.syncMs} ms, with ${fleet.library})`,
    );
  }
  if (adminUrl !== null)
    lines.push(
      `status page: ${adminUrl}/ (JSON: ${adminUrl}/status, Prometheus: ${adminUrl}/metrics)`,
    );
  if (run.demo) {
    lines.push(
      '',
      'Try it (the last requests of the burst answer 429, over 10 a second):',
      `  for i in $(seq 15); do curl -s -o /dev/null -w '%{http_code} ' ${url}/; done; echo`,
      `  curl -i ${url}/            # the RateLimit and RateLimit-Policy fields`,
      `  curl '${url}/slow?ms=5000'   # 5 of these at once: the 5th answers 503`,
      'A real upstream: hotcount proxy --upstream http://HOST:PORT --rate 100/1s --inflight 10 --admin 9090',
      'Ctrl-C stops.',
    );
  }
  process.stdout.write(`${lines.join('\n')}\n`);
  await new Promise<void>((resolve) => {
    const stop = (signal: string) => {
      process.stdout.write(
        `hotcount proxy: ${signal}: no new connections; ${proxy.traffic.inflight} requests in progress have ${run.graceMs} ms\n`,
      );
      resolve();
    };
    process.once('SIGTERM', () => stop('SIGTERM'));
    process.once('SIGINT', () => stop('SIGINT'));
  });
  await proxy.close(run.graceMs);
  if (fleet !== null) await fleet.close();
  // Then what served it: the demo upstream had to answer the requests let finish.
  for (const server of [admin, upstreamServer]) {
    if (server !== null)
      await new Promise((resolve) => server.close(resolve).closeAllConnections());
  }
  process.stdout.write('hotcount proxy: stopped\n');
}
