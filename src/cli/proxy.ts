/**
 * `hotcount proxy`: the limiting reverse proxy on the command line (see proxy/proxy.ts). Flags
 * give one limit for every path; a JSON config file (`--config`) gives several, per route
 * prefix and key kind, and any other setting, which flags then override.
 */
import { type EventEmitter, once } from 'node:events';
import { readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { createAdminServer } from '../proxy/admin.js';
import { createDemoUpstream } from '../proxy/demo-upstream.js';
import { parseDuration, parseRate } from '../proxy/duration.js';
import {
  type InflightSpec,
  LimitingProxy,
  type ProxyLimitOptions,
  type ProxyOptions,
  type RateLimiterSpec,
  SERVER_DEFAULTS,
} from '../proxy/proxy.js';
import { InputError, reason, UsageError } from './errors.js';

/**
 * The flags of the server options (proxy.ts's SERVER_DEFAULTS): config field, what the value
 * is, and the help's line. Durations are written as for --timeout; sizes and counts as integers.
 */
const SERVER_FLAGS = [
  [
    'max-connections',
    'maxConnections',
    'count',
    'client connections open at once; the excess is answered 503',
  ],
  [
    'upstream-connections',
    'upstreamConnections',
    'count',
    'connections to the upstream at once, kept alive',
  ],
  [
    'headers-timeout',
    'headersTimeout',
    'duration',
    "how long a client may take to send a request's head",
  ],
  [
    'request-timeout',
    'requestTimeout',
    'duration',
    'how long a client may take to send a whole request',
  ],
  [
    'keep-alive-timeout',
    'keepAliveTimeout',
    'duration',
    'how long an idle client connection stays open',
  ],
  ['max-header-size', 'maxHeaderSize', 'count', "bytes of a request's head; more are answered 431"],
  [
    'max-url-length',
    'maxUrlLength',
    'count',
    'characters of a request target; more are answered 414',
  ],
] as const satisfies readonly (readonly [
  string,
  keyof typeof SERVER_DEFAULTS,
  'count' | 'duration',
  string,
])[];

/** `ms` as the help writes a duration: 10s, 500ms. */
function durationText(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`;
}

function serverFlagsHelp(): string {
  const indent = ' '.repeat(25);
  return SERVER_FLAGS.map(([flag, field, kind, what]) => {
    const value = SERVER_DEFAULTS[field];
    const fallback = kind === 'duration' ? durationText(value) : value.toLocaleString('en-US');
    const left = `  --${flag} ${kind === 'duration' ? 'DURATION' : 'N'}`;
    // The help's columns: a flag too long for the first gets its text on the next line, and
    // text past 96 characters goes on with the same indent.
    const lines = [left.length < 24 ? left.padEnd(25) : `${left}\n${indent}`];
    for (const word of `${what} (default ${fallback})`.split(' ')) {
      const last = lines.length - 1;
      const line = lines[last].slice(lines[last].lastIndexOf('\n') + 1);
      if (line.length + word.length > 96) lines.push(`${indent}${word}`);
      else lines[last] += line.length === 25 ? word : ` ${word}`;
    }
    return lines.join('\n');
  }).join('\n');
}

export const PROXY_USAGE = `Usage: hotcount proxy --upstream http://HOST:PORT [options]
       hotcount proxy --demo [options]

A reverse proxy that limits each client before the upstream is touched: 429 over the rate,
503 over the requests in progress. Memory is fixed, whatever the number of clients.

Options:
  --upstream URL         where requests go: http://HOST:PORT
  --listen [HOST:]PORT   where the proxy listens (default 127.0.0.1:8080; HOST 0.0.0.0 for
                         every interface)
  --rate N/DURATION      requests per key per window: 100/1s, 600/1m (DURATION: 500ms, 1s, 1m, 1h)
  --inflight N           requests in progress at once per key
  --key ip|header:NAME   what a limit counts under (default ip: the client address)
  --trust-proxy N        proxies in front of this one whose X-Forwarded-For is trusted (default 0)
  --admin [HOST:]PORT    the status page (/), /status (JSON) and /metrics (Prometheus);
                         it shows client keys: keep it private (default host 127.0.0.1)
  --config FILE          a JSON file: { "upstream", "listen", "admin", "trustProxy", "timeout",
                         "grace", "limits": [{ "name", "prefix", "key", "rate", "algorithm",
                         "burst", "inflight" }], and the fields named as the flags below in
                         camelCase ("maxConnections", "headersTimeout": "10s", ...) }; flags
                         override it
  --timeout DURATION     how long the upstream may stay silent before a 504 (default 30s)
  --grace DURATION       on SIGTERM, how long requests in progress may take (default 10s)
${serverFlagsHelp()}
  --redis URL            share the limits (rate and inflight) with every proxy given the same
                         URL, limits and secret (environment HOTCOUNT_SECRET, at least 16
                         bytes): each decides in process and syncs with Redis
                         (redis://HOST:PORT)
  --sync DURATION        with --redis, how often each proxy syncs (default 50ms)
  --demo                 put a built-in demo upstream behind the proxy, with example limits
  -h, --help             this help
`;

export interface ProxyRun {
  options: ProxyOptions | null;
  /** --redis: where the fleet's limits live, the fleet's secret and how often to sync. */
  redis: { url: string; secret: Uint8Array; syncMs: number } | null;
  listen: Address;
  admin: Address | null;
  graceMs: number;
  demo: boolean;
  help: boolean;
}

interface Address {
  host: string;
  port: number;
}

const CONFIG_NAMES = [
  'upstream',
  'listen',
  'admin',
  'trustProxy',
  'timeout',
  'grace',
  'limits',
  'width',
  'depth',
  'epsilon',
  'delta',
  ...SERVER_FLAGS.map(([, field]) => field),
];

/** `[HOST:]PORT`, HOST 127.0.0.1 when absent; `[::1]:8080` for IPv6. */
export function parseAddress(flag: string, text: unknown): Address {
  const match =
    typeof text === 'string' ? /^(?:(\[[0-9a-fA-F:.]+\]|[^:[\]]+):)?(\d{1,5})$/.exec(text) : null;
  const port = match === null ? -1 : Number(match[2]);
  if (match === null || port > 65535) {
    throw new UsageError(
      `${flag} must be [HOST:]PORT, such as 8080 or 0.0.0.0:8080; received ${JSON.stringify(text)}`,
    );
  }
  const host = match[1] === undefined ? '127.0.0.1' : match[1].replace(/^\[(.*)\]$/, '$1');
  return { host, port };
}

function readConfig(file: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new InputError(`cannot read --config '${file}': ${reason(error)}`);
  }
  let config: unknown;
  try {
    config = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`--config '${file}' is not JSON: ${(error as Error).message}`);
  }
  if (config === null || typeof config !== 'object' || Array.isArray(config)) {
    throw new UsageError(`--config '${file}' must hold a JSON object`);
  }
  for (const name of Object.keys(config)) {
    if (!CONFIG_NAMES.includes(name)) {
      throw new UsageError(
        `--config '${file}': unknown field '${name}' (fields: ${CONFIG_NAMES.join(', ')})`,
      );
    }
  }
  return config as Record<string, unknown>;
}

/** `f()`, its errors made usage errors (exit 2, one line) unless they are the CLI's already. */
function wrap<T>(f: () => T): T {
  try {
    return f();
  } catch (error) {
    if (error instanceof UsageError || error instanceof InputError) throw error;
    throw new UsageError((error as Error).message);
  }
}

export function parseProxyArgs(args: string[]): ProxyRun {
  let values: ReturnType<typeof parse>['values'];
  try {
    ({ values } = parse(args));
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const help = values.help ?? false;
  const demo = values.demo ?? false;
  const config = values.config === undefined ? {} : readConfig(values.config);
  const pick = (flag: string | undefined, field: string): unknown => flag ?? config[field];
  const listen = parseAddress('--listen', pick(values.listen, 'listen') ?? '8080');
  const adminText = pick(values.admin, 'admin') ?? (demo ? '9090' : undefined);
  const admin = adminText === undefined ? null : parseAddress('--admin', adminText);
  const graceMs = wrap(() => parseDuration('--grace', pick(values.grace, 'grace') ?? '10s'));
  if (help) return { options: null, redis: null, listen, admin, graceMs, demo, help };

  const flagLimit: ProxyLimitOptions = {};
  if (values.rate !== undefined) {
    wrap(() => parseRate('--rate', values.rate));
    flagLimit.rate = values.rate;
  }
  if (values.inflight !== undefined) {
    const inflight = Number(values.inflight);
    if (!(Number.isInteger(inflight) && inflight >= 1)) {
      throw new UsageError(`--inflight must be an integer >= 1; received '${values.inflight}'`);
    }
    flagLimit.inflight = inflight;
  }
  if (values.key !== undefined) flagLimit.key = values.key as ProxyLimitOptions['key'];
  const flagged = Object.keys(flagLimit).length > 0;
  if (flagged && config.limits !== undefined) {
    throw new UsageError(
      '--rate, --inflight and --key make one limit; the --config file has limits: use one or the other',
    );
  }
  if (demo) {
    if (flagLimit.rate === undefined && flagLimit.inflight === undefined) {
      flagLimit.rate = '10/1s';
      flagLimit.inflight = 4;
    }
  } else if (pick(values.upstream, 'upstream') === undefined) {
    throw new UsageError('--upstream is required (or --demo)');
  }
  if (
    flagLimit.key !== undefined &&
    flagLimit.rate === undefined &&
    flagLimit.inflight === undefined
  ) {
    throw new UsageError('--key needs --rate or --inflight');
  }
  let trustProxy: unknown = config.trustProxy;
  if (values['trust-proxy'] !== undefined) {
    trustProxy = Number(values['trust-proxy']);
    if (!Number.isInteger(trustProxy)) {
      throw new UsageError(`--trust-proxy must be an integer; received '${values['trust-proxy']}'`);
    }
  }
  const options: ProxyOptions = {
    upstream: (pick(values.upstream, 'upstream') as string) ?? 'http://127.0.0.1:1',
    limits: flagged || demo ? [flagLimit] : ((config.limits as ProxyLimitOptions[]) ?? []),
    timeoutMs: wrap(() => parseDuration('--timeout', pick(values.timeout, 'timeout') ?? '30s')),
  };
  if (trustProxy !== undefined) options.trustProxy = trustProxy as number;
  for (const [flag, field, kind] of SERVER_FLAGS) {
    const given = pick((values as Record<string, string | undefined>)[flag], field);
    if (given !== undefined) options[field] = serverValue(`--${flag}`, kind, given);
  }
  for (const name of ['width', 'depth', 'epsilon', 'delta'] as const) {
    if (config[name] !== undefined) options[name] = config[name] as number;
  }
  // Validates everything now, with the option named, before a port is bound.
  wrap(() => new LimitingProxy(options).server.close());
  const redis = fleetOf(values.redis, values.sync, options);
  return { options, redis, listen, admin, graceMs, demo, help };
}

/** A server option's value from its flag (text) or the config file (text or a number). */
function serverValue(flag: string, kind: 'count' | 'duration', given: unknown): number {
  if (kind === 'duration') return wrap(() => parseDuration(flag, given));
  const n = typeof given === 'string' && /^\d{1,10}$/.test(given) ? Number(given) : given;
  if (!(Number.isInteger(n) && (n as number) >= 1 && (n as number) <= 2 ** 31 - 1)) {
    throw new UsageError(`${flag} must be an integer >= 1; received ${JSON.stringify(given)}`);
  }
  return n as number;
}

/** --redis and --sync, checked: the fleet's Redis, secret and sync interval, or null. */
function fleetOf(url: string | undefined, sync: string | undefined, options: ProxyOptions) {
  if (url === undefined) {
    if (sync !== undefined) throw new UsageError('--sync needs --redis');
    return null;
  }
  if (!/^rediss?:\/\/[^\s]+$/.test(url)) {
    throw new UsageError(`--redis must be a URL such as redis://127.0.0.1:6379; received '${url}'`);
  }
  const text = process.env.HOTCOUNT_SECRET;
  const secret = text === undefined ? null : new TextEncoder().encode(text);
  if (secret === null || secret.length < 16) {
    throw new UsageError(
      "--redis needs the fleet's secret in the environment variable HOTCOUNT_SECRET (at least 16 bytes, the same for every proxy): it keys the hashing, so that clients cannot aim at collisions",
    );
  }
  if ((options.limits ?? []).some((limit) => limit.algorithm === 'gcra')) {
    throw new UsageError(
      '--redis shares sliding-window rates only: gcra needs an atomic step per request in Redis',
    );
  }
  let syncMs = 50;
  if (sync !== undefined) {
    syncMs = wrap(() => parseDuration('--sync', sync));
    if (syncMs > 3_600_000) {
      throw new UsageError(`--sync must be at most 1h; received '${sync}'`);
    }
  }
  return { url, secret, syncMs };
}

function parse(args: string[]) {
  return parseArgs({
    args,
    allowPositionals: false,
    strict: true,
    options: {
      upstream: { type: 'string' },
      listen: { type: 'string' },
      rate: { type: 'string' },
      inflight: { type: 'string' },
      key: { type: 'string' },
      'trust-proxy': { type: 'string' },
      admin: { type: 'string' },
      config: { type: 'string' },
      timeout: { type: 'string' },
      grace: { type: 'string' },
      redis: { type: 'string' },
      sync: { type: 'string' },
      ...Object.fromEntries(SERVER_FLAGS.map(([flag]) => [flag, { type: 'string' as const }])),
      demo: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
}

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

/**
 * The fleet's Redis: a client (ioredis, an optional peer: imported only here) and makers of
 * local-first rate limiters and inflight counters named after the proxy's limits, so that
 * proxies with the same limits share them.
 */
async function connectFleet(fleet: NonNullable<ProxyRun['redis']>, options: ProxyOptions) {
  let Redis: typeof import('ioredis').Redis;
  let redis: typeof import('../redis/index.js');
  try {
    ({ Redis } = await import('ioredis'));
    redis = await import('../redis/index.js');
  } catch (error) {
    throw new InputError(
      `--redis needs the ioredis package (npm install ioredis): ${reason(error)}`,
    );
  }
  const client = new Redis(fleet.url);
  // The structures go stale and say so; the client's errors must not end the process.
  client.on('error', () => {});
  const { width, depth, epsilon, delta } = options;
  const shape = {
    redis: client,
    secret: fleet.secret,
    ...(width === undefined ? {} : { width }),
    ...(depth === undefined ? {} : { depth }),
    ...(epsilon === undefined ? {} : { epsilon }),
    ...(delta === undefined ? {} : { delta }),
  };
  // One line when Redis goes away and one when it is back, whichever structure notices first.
  let away = false;
  const watch = (made: EventEmitter) => {
    made.on('stale', (error: Error) => {
      if (away) return;
      away = true;
      process.stderr.write(
        `hotcount proxy: Redis away (${error.message}); deciding from what this proxy knows\n`,
      );
    });
    made.on('sync', () => {
      if (!away) return;
      away = false;
      process.stderr.write('hotcount proxy: Redis is back\n');
    });
  };
  const limiters: InstanceType<typeof redis.RedisRateLimiter>[] = [];
  const counters: InstanceType<typeof redis.LocalFirstInflight>[] = [];
  const rateLimiter = (spec: RateLimiterSpec) => {
    const limiter = new redis.RedisRateLimiter({
      ...shape,
      name: `proxy:${spec.name}`,
      limit: spec.limit,
      windowMs: spec.windowMs,
      localFirst: { syncMs: fleet.syncMs },
    });
    watch(limiter);
    limiters.push(limiter);
    return limiter.local;
  };
  const inflightCounter = (spec: InflightSpec) => {
    const counter = new redis.LocalFirstInflight({
      ...shape,
      name: `proxy:${spec.name}:inflight`,
      syncMs: fleet.syncMs,
      leaseMs: Math.max(10_000, 3 * fleet.syncMs),
    });
    watch(counter);
    counters.push(counter);
    return counter;
  };
  const close = async () => {
    // What this proxy held is given back now, not when its lease ends.
    await Promise.all([
      ...limiters.map((limiter) => limiter.close().catch(() => {})),
      ...counters.map((counter) => counter.flush().catch(() => {})),
    ]);
    for (const counter of counters) counter.close();
    client.disconnect();
  };
  return { rateLimiter, inflightCounter, close };
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
  if (run.redis !== null) {
    lines.push(`  limits shared through ${run.redis.url} (sync every ${run.redis.syncMs} ms)`);
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
