/**
 * hotcount/redis: sketches in Redis, for a fleet of processes and hosts. It takes the client the
 * user has (ioredis, node-redis, iovalkey or valkey-glide: optional peer dependencies of this
 * entry point only).
 *
 *   import { RedisCountMinSketch } from 'hotcount/redis';
 *   const sketch = new RedisCountMinSketch({ redis, name: 'requests', secret });
 *   await sketch.increment('customer-42');
 *
 * @module
 */

export type {
  GlideClient,
  IoredisClient,
  NodeRedisClient,
  NodeRedisCluster,
  RedisClient,
} from './client.js';
export { type LocalFirstOptions, LocalFirstSketch, type LocalFirstStatus } from './local-first.js';
export {
  LocalFirstInflight,
  type LocalFirstInflightOptions,
} from './local-first-inflight.js';
export type { PlaceOptions } from './place.js';
export { type RedisCountMinOptions, RedisCountMinSketch } from './redis-count-min.js';
export { RedisInflight, RedisInflightGuard, type RedisInflightOptions } from './redis-inflight.js';
export { RedisRateLimiter, type RedisRateLimiterOptions } from './redis-rate-limiter.js';
export type { StalePolicy, SyncStatus } from './staleness.js';
