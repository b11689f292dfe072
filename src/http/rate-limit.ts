/**
 * `rateLimit`: a RateLimiter (sliding window or GCRA) as Connect-style middleware. Over the
 * limit: 429, Retry-After in whole seconds (at least 1) and a problem+json body; on every
 * response, the draft's RateLimit-Policy and RateLimit fields (see responses.ts). Memory is the
 * limiter's three sketches, whatever the number of clients.
 */
import type { IncomingMessage } from 'node:http';
import { typeError } from '../errors.js';
import { type RateLimitDecision, RateLimiter, type RateLimiterOptions } from '../index.js';
import { type ClientKeyOptions, keyOf } from './client-key.js';
import { checkBoolean, checkFunction, fail, type Middleware } from './middleware.js';
import { checkName, rateLimitFields, refuse, retryAfterSeconds } from './responses.js';

export interface RateLimitOptions extends Omit<RateLimiterOptions, 'now'>, ClientKeyOptions {
  /** The policy's name in the RateLimit fields. Default "rate". */
  name?: string;
  /** Requests for which this returns true pass uncounted. */
  skip?: (req: IncomingMessage) => boolean;
  /** Count and send the fields, but never refuse. Default false. */
  dryRun?: boolean;
  /** Called on each refusal (also in dryRun), before the response. */
  onLimit?: (req: IncomingMessage, decision: RateLimitDecision) => void;
}

/** The middleware, and the limiter it decides with (for status pages and tests). */
export function rateLimit(options: RateLimitOptions): Middleware & { limiter: RateLimiter } {
  if (options === null || typeof options !== 'object') {
    throw typeError('options', 'an object with limit and windowMs', options);
  }
  // What is not HTTP's goes to the RateLimiter, which refuses names it does not know.
  const {
    name: named,
    key: keyed,
    trustProxy,
    ipv6Prefix,
    skip: skipped,
    dryRun: dry,
    onLimit: onLimited,
    ...limiterOptions
  } = options;
  const limiter = new RateLimiter(limiterOptions);
  const name = checkName(named, 'rate');
  const key = keyOf({ key: keyed, trustProxy, ipv6Prefix });
  const skip = checkFunction('skip', skipped);
  const onLimit = checkFunction('onLimit', onLimited);
  const dryRun = checkBoolean('dryRun', dry);
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
