/**
 * `rateLimit`: a RateLimiter (sliding window or GCRA) as Connect-style middleware. Over the
 * limit: 429, Retry-After in whole seconds (at least 1) and a problem+json body; on every
 * response, the draft's RateLimit-Policy and RateLimit fields (see responses.ts). Memory is the
 * limiter's three sketches, whatever the number of clients.
 *
 * The decision is `RateLimitRule`'s, written once; the middleware here and the Fastify plugin
 * (fastify.ts) only carry it to their framework's response.
 */
import type { IncomingMessage } from 'node:http';
import {
  type Key,
  type RateDecider,
  type RateLimitDecision,
  RateLimiter,
  type RateLimiterOptions,
} from '../core.js';
import { type KeyOf, NODE_REQUEST, type RequestAccess } from './client-key.js';
import {
  fail,
  httpOptions,
  type LimitHttpOptions,
  type Middleware,
  madeElsewhere,
} from './middleware.js';
import { type Refusal, refuse, retryAfterSeconds, setField } from './responses.js';

/** The fields a decision adds, and the refusal to send (null when the request goes on). */
export interface RateLimitOutcome {
  policy: string;
  state: string;
  refusal: Refusal | null;
}

/**
 * `rateLimit`'s options: the RateLimiter's and the HTTP ones; `Req` is the request that the
 * functions (key, skip, onLimit) receive (Node's here; Koa's context in hotcount/koa).
 */
export interface RateLimitOptions<Req = IncomingMessage>
  extends RateLimiterOptions,
    LimitHttpOptions<RateLimitDecision, Req> {}

/** A rule's options with the limiter made elsewhere (the proxy's fleet mode). */
export type RateLimitRuleOptions<Req = IncomingMessage> =
  | RateLimitOptions<Req>
  | (LimitHttpOptions<RateLimitDecision, Req> & { limiter: RateDecider });

/**
 * A RateLimiter with its HTTP options: keys, skip, dryRun, the fields, the refusal; over the
 * requests of one framework, read through `access` (Node's IncomingMessage by default).
 */
export class RateLimitRule<Req = IncomingMessage> {
  readonly limiter: RateDecider;
  readonly name: string;
  /** Finds a request's key. */
  readonly key: KeyOf<Req>;
  private readonly skip: ((req: Req) => boolean) | undefined;
  private readonly onLimit: ((req: Req, decision: RateLimitDecision) => void) | undefined;
  private readonly dryRun: boolean;
  private readonly policy: string;

  constructor(options: RateLimitRuleOptions<Req>, access: RequestAccess<Req>) {
    const { name, key, skip, onLimit, dryRun, rest } = httpOptions<
      RateLimitDecision,
      Req,
      RateLimitRuleOptions<Req>
    >(options, 'an object with limit and windowMs', 'rate', access);
    this.limiter =
      'limiter' in rest
        ? madeElsewhere<RateDecider>(
            rest,
            'limiter',
            'check',
            "a RateDecider (a RateLimiter, or a local-first RedisRateLimiter's local)",
            'its own limit, window and sketch',
          )
        : new RateLimiter(rest as RateLimiterOptions);
    this.name = name;
    this.key = key;
    this.skip = skip;
    this.onLimit = onLimit;
    this.dryRun = dryRun;
    const { limit, windowMs } = this.limiter;
    this.policy = `"${name}";q=${limit};w=${Math.max(1, Math.ceil(windowMs / 1000))}`;
  }

  /**
   * Decides `req`: null when skipped; else the fields to append, and the refusal to send (null
   * when the request goes on). Throws for a key that cannot be found.
   */
  decide(req: Req): RateLimitOutcome | null {
    if (this.skip?.(req)) return null;
    return this.decideKey(req, this.key(req));
  }

  /** The same, for a key already found and without `skip` (for the proxy). */
  decideKey(req: Req, key: Key): RateLimitOutcome {
    const decision = this.limiter.check(key);
    const state = `"${this.name}";r=${decision.remaining};t=${Math.ceil(decision.resetMs / 1000)}`;
    let refusal: Refusal | null = null;
    if (!decision.allowed) {
      this.onLimit?.(req, decision);
      if (!this.dryRun) {
        const { limit, windowMs } = this.limiter;
        const seconds = retryAfterSeconds(decision.retryAfterMs);
        refusal = {
          status: 429,
          title: 'Too Many Requests',
          detail: `over the rate limit "${this.name}" (${limit} per ${windowMs} ms); retry in ${seconds} s`,
          retryAfterS: seconds,
        };
      }
    }
    return { policy: this.policy, state, refusal };
  }
}

/**
 * The middleware, and the limiter it decides with (for status pages and tests). With `limiter`
 * (a RateDecider, such as a local-first RedisRateLimiter's `local`) it decides with that one,
 * for limits shared by a fleet, instead of making a RateLimiter from the options.
 */
export function rateLimit(options: RateLimitOptions): Middleware & {
  /** The RateLimiter it decides with. */
  limiter: RateLimiter;
};
export function rateLimit(
  options: LimitHttpOptions<RateLimitDecision> & { limiter: RateDecider },
): Middleware & {
  /** The limiter it was given. */
  limiter: RateDecider;
};
export function rateLimit(options: RateLimitRuleOptions): Middleware & { limiter: RateDecider } {
  const rule = new RateLimitRule(options, NODE_REQUEST);
  const limiter = rule.limiter;
  const middleware: Middleware = (req, res, next) => {
    let decided: ReturnType<RateLimitRule['decide']>;
    try {
      decided = rule.decide(req);
    } catch (error) {
      fail(res, next, error);
      return;
    }
    if (decided !== null) {
      setField(res, 'RateLimit-Policy', decided.policy);
      setField(res, 'RateLimit', decided.state);
      if (decided.refusal !== null) {
        refuse(res, decided.refusal);
        return;
      }
    }
    next();
  };
  return Object.assign(middleware, { limiter });
}
