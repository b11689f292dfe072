/**
 * `hotcount proxy --redis`: the fleet's limits in Redis, each proxy deciding locally first
 * (RedisRateLimiter and LocalFirstInflight of hotcount/redis), named after the proxy's limits.
 */
import type { EventEmitter } from 'node:events';
import type { ProxyOptions } from '../proxy/limiting-proxy.js';
import type { InflightSpec, RateLimiterSpec } from '../proxy/proxy-limit.js';
import type { IoredisClient, NodeRedisClient, RedisClient } from '../redis/index.js';
import { InputError, reason } from './failures.js';
import type { ProxyRun } from './proxy-args.js';

/** The client libraries `--redis` connects with, in the order it looks for them. */
const CLIENTS = ['ioredis', 'redis', 'iovalkey'] as const;

/** A connected client of the fleet's Redis, and how to close it. */
interface FleetClient {
  client: RedisClient;
  /** The library's package name, for the startup lines. */
  library: (typeof CLIENTS)[number];
  end(): void;
}

/**
 * A client of `url` made with the first client library the project has: ioredis, node-redis
 * (`redis`) or iovalkey, all optional peers, imported only here. The connection is not waited
 * for: a proxy starts with Redis away, and its limits decide locally until Redis answers.
 */
async function connectClient(url: string): Promise<FleetClient> {
  for (const name of CLIENTS) {
    let library: Record<string, unknown>;
    try {
      library = await import(name);
    } catch (error) {
      if ((error as { code?: string }).code === 'ERR_MODULE_NOT_FOUND') continue;
      throw new InputError(`--redis could not load ${name}: ${reason(error)}`);
    }
    // Their errors (Redis away) must not end the process: the structures go stale and say so.
    if (name === 'redis') {
      const client = (library.createClient as (options: object) => NodeRedisLike)({ url });
      client.on('error', () => {});
      client.connect().catch(() => {});
      return { client, library: name, end: () => client.destroy() };
    }
    const Client = (name === 'ioredis' ? library.Redis : library.Valkey) as new (
      url: string,
    ) => IoredisLike;
    const client = new Client(url);
    client.on('error', () => {});
    return { client, library: name, end: () => client.disconnect() };
  }
  throw new InputError(
    '--redis needs a Redis client: npm install ioredis (or redis, node-redis; or iovalkey)',
  );
}

type Emitter = { on(event: 'error', listener: () => void): unknown };
type NodeRedisLike = NodeRedisClient & Emitter & { connect(): Promise<unknown>; destroy(): void };
type IoredisLike = IoredisClient & Emitter & { disconnect(): void };

/**
 * The fleet's Redis: a client and makers of local-first rate limiters and inflight counters named
 * after the proxy's limits, so that proxies with the same limits share them.
 */
export async function connectFleet(fleet: NonNullable<ProxyRun['redis']>, options: ProxyOptions) {
  const { client, library, end } = await connectClient(fleet.url);
  const redis = await import('../redis/index.js');
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
    end();
  };
  return { rateLimiter, inflightCounter, close, library };
}
