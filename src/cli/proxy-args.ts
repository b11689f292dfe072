/**
 * The arguments of `hotcount proxy`: flags give one limit for every path; a JSON config file
 * (`--config`) gives several, per route prefix and key kind, and any other setting, which flags
 * then override. What they ask for is a ProxyRun, which proxy.ts runs.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { parseDuration, parseRate } from '../proxy/duration.js';
import { LimitingProxy, type ProxyOptions, SERVER_DEFAULTS } from '../proxy/limiting-proxy.js';
import type { ProxyLimitOptions } from '../proxy/proxy-limit.js';
import { InputError, reason, UsageError } from './failures.js';

/**
 * The flags of the server options (limiting-proxy.ts's SERVER_DEFAULTS): config field, what the value
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
                         (redis://HOST:PORT), through the client the project has: ioredis,
                         redis (node-redis) or iovalkey
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

export interface Address {
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
