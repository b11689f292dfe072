// examples/limits.ts
import { Inflight, RateLimiter } from 'hotcount';

// 5 requests a second per client, in bursts of up to 5 (GCRA); refused requests do not count.
const limiter = new RateLimiter({ limit: 5, windowMs: 1000, algorithm: 'gcra' });
const answers = [];
for (let i = 0; i < 7; i++) {
  const { allowed, retryAfterMs } = limiter.check('203.0.113.7');
  answers.push(allowed ? 'ok' : `429 (retry in ${retryAfterMs} ms)`);
}
console.log(answers.join(', '));

// At most 2 requests in progress per origin: the third gets a 503.
const inflight = new Inflight();
const first = inflight.tryAcquire('origin-a', 2);
const second = inflight.tryAcquire('origin-a', 2);
console.log(`third: ${inflight.tryAcquire('origin-a', 2) === null ? '503' : 'admitted'}`);
first?.release();
second?.release();
console.log(`in progress after release: ${inflight.estimate('origin-a')}`);
