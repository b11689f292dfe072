/**
 * `hotcount proxy --redis`: the fleet's limits in Redis, each proxy deciding locally first
 * (RedisRateLimiter and LocalFirstInflight of hotcount/redis), named after the proxy's limits.
 */
import type { EventEmitter } from 'node:events';
import type { ProxyOptions } from '../proxy/limiting-proxy.js';
import type { InflightSpec, RateLimiterSpec } from '../proxy/proxy-limit.js';
import { InputError, reason } from './failures.js';
import type { ProxyRun } from './proxy-args.js';

/**
 * The fleet's Redis: a client (ioredis, an optional peer: imported only here) and makers of
 * local-first rate limiters and inflight counters named after the proxy's limits, so that
 * proxies with the same limits share them.
 */
export async function connectFleet(fleet: NonNullable<ProxyRun['redis']>, options: ProxyOptions) {
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
