/**
 * The Redis clients hotcount/redis takes: an ioredis client, or an ioredis Cluster. A file of
 * its own so that the modules that talk to Redis (place.ts, write-groups.ts) import it from
 * below instead of from each other.
 */
import type { Cluster, Redis } from 'ioredis';

/** An ioredis client (`new Redis(...)`) or cluster (`new Redis.Cluster(...)`). */
export type RedisClient = Redis | Cluster;
