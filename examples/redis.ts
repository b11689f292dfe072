// examples/redis.ts
import { randomBytes } from 'node:crypto';
import { RedisRateLimiter } from 'hotcount/redis';
import { createClient } from 'redis';

// The client your project has, as it is: node-redis here. Or, in the same place:
//   const redis = new Redis(url);                                      // ioredis 5, 6
//   const redis = new Redis.Cluster([{ host, port }]);                  // ioredis Cluster
//   const redis = await createCluster({ rootNodes: [{ url }] }).connect(); // node-redis Cluster
//   const redis = new Valkey(url);                                     // iovalkey
const redis = await createClient({ url: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379' })
  .on('error', (error) => console.error(error.message))
  .connect();
// Every process of the fleet opens the same name with the same secret (16 bytes or more, from
// your configuration: it keys the hashing); here a fresh name and secret per run.
const limiter = new RedisRateLimiter({
  redis,
  name: `example-${randomBytes(4).toString('hex')}`,
  secret: randomBytes(16),
  limit: 2,
  windowMs: 60_000,
});
const statuses: number[] = [];
for (let i = 0; i < 3; i++) statuses.push((await limiter.check('client-7')).allowed ? 200 : 429);
console.log(statuses.join(' ')); // 200 200 429, whichever process of the fleet asks
redis.destroy();
