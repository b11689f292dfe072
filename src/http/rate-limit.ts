/**
 * `rateLimit`: a RateLimiter (sliding window or GCRA) as Connect-style middleware. Over the
 * limit: 429, Retry-After in whole seconds (at least 1) and a problem+json body; on every
 * response, the draft's RateLimit-Policy and RateLimit fields (see responses.ts). Memory is the
 * limiter's three sketches, whatever the number of clients.
 */
import { type RateLimitDecision, RateLimiter, type RateLimiterOptions } from '../index.js';
import { fail, httpOptions, type LimitHttpOptions, type Middleware } from './middleware.js';
import { rateLimitFields, refuse, retryAfterSeconds } from './responses.js';

export interface RateLimitOptions extends RateLimiterOptions, LimitHttpOptions<RateLimitDecision> {}

/** The middleware, and the limiter it decides with (for status pages and tests). */
export function rateLimit(options: RateLimitOptions): Middleware & { limiter: RateLimiter } {
  const { name, key, skip, onLimit, dryRun, rest } = httpOptions<
    RateLimitDecision,
    RateLimitOptions
  >(options, 'an object with limit and windowMs', 'rate');
  const limiter = new RateLimiter(rest);
  const { limit, windowMs } = limiter;

  const middleware: Middleware = (req, res, next) => {
    let decision: RateLimitDecision;
    try {
      if (skip?.(req)) {
        next();
        return;
      }
      decision = limiter.check(key(req));
    } catch (error) {
      fail(res, next, error);
      return;
    }
    rateLimitFields(res, name, limit, windowMs, decision.remaining, decision.resetMs);
    if (!decision.allowed) {
      onLimit?.(req, decision);
      if (!dryRun) {
        const seconds = retryAfterSeconds(decision.retryAfterMs);
        refuse(
          res,
          429,
          'Too Many Requests',
          `over the rate limit "${name}" (${limit} per ${windowMs} ms); retry in ${seconds} s`,
          seconds,
        );
        return;
      }
    }
    next();
  };
  return Object.assign(middleware, { limiter });
}
