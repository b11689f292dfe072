// examples/redis.ts
import { randomBytes } from 'node:crypto';
import { RedisRateLimiter } from 'hotcount/redis';
import { Redis } from 'ioredis';

// Every process of the fleet opens the same name with the same secret (16 bytes or more, from
// your configuration: it keys the hashing); here a fresh name and secret per run.
const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
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
redis.disconnect();
