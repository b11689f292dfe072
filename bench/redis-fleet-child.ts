/**
 * One process of a local-first fleet, for the redis suite's commands-per-second row: a
 * local-first RedisRateLimiter checked at a paced rate (every 10 ms, rate / 100 checks over
 * distinct client keys) for a while. Prints "ready" once connected and synced, then, at the
 * end, the checks it made per second.
 *
 *   node redis-fleet-child.js PORT NAME CHECKS_PER_SECOND DURATION_MS SYNC_MS
 */
import { Redis } from 'ioredis';
import { RedisRateLimiter } from '../src/redis/index.js';

const [port, name, rate, durationMs, syncMs] = process.argv.slice(2);
const redis = new Redis(Number(port), '127.0.0.1');
const limiter = new RedisRateLimiter({
  redis,
  name,
  secret: new Uint8Array(16).fill(13),
  limit: 1_000_000_000,
  windowMs: 60_000,
  localFirst: { syncMs: Number(syncMs) },
});
await limiter.flush();
process.stdout.write('ready\n');
const perTick = Number(rate) / 100;
const started = Date.now();
let checks = 0;
let key = process.pid * 1_000_000;
await new Promise<void>((resolve) => {
  const tick = setInterval(() => {
    // Catch up with the clock: the rate holds even when a tick comes late.
    const due = Math.floor(((Date.now() - started) / 10) * perTick);
    while (checks < due) {
      limiter.checkLocal(`10.${(key >> 16) & 255}.${(key >> 8) & 255}.${key & 255}`);
      key++;
      checks++;
    }
    if (Date.now() - started >= Number(durationMs)) {
      clearInterval(tick);
      resolve();
    }
  }, 10);
});
process.stdout.write(`checks/s ${Math.round(checks / ((Date.now() - started) / 1000))}\n`);
await limiter.close();
redis.disconnect();
