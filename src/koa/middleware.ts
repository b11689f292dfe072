/**
 * The limits as Koa middleware: `rateLimit` and `inflightLimit`, the rules of hotcount/http
 * (http/rate-limit.ts, http/inflight-limit.ts) carried to Koa's context. The decision, the
 * RateLimit fields, the refusals (429 with Retry-After and problem+json, 503 for requests in
 * progress) and the client keys are those rules'; this file only reads the request from `ctx`
 * and answers through it, so that Koa's own response path (its error handling, its `respond`)
 * stays in charge.
 *
 * Fields are appended to `ctx.res` as the node:http middleware appends them (several limits on
 * one route each add their member). A key function that throws is thrown on into Koa's error
 * handling (500 by default, or the app's error middleware). The inflight guard is given back on
 * the response's `close`, which Node emits once the response is sent, whatever sent it (the
 * handler, Koa's error handling after a throwing downstream, a streamed body at its end), and
 * when the client goes away first; a guard released twice gives back once.
 */
import type { Context, Next } from 'koa';
import { type Inflight, InflightGuard, type RateLimiter } from '../core.js';
import { NODE_REQUEST, type RequestAccess } from '../http/client-key.js';
import { type InflightLimitOptions, InflightRule } from '../http/inflight-limit.js';
import { type RateLimitOptions, RateLimitRule } from '../http/rate-limit.js';
import { problemBody, type Refusal, setField } from '../http/responses.js';

/** Koa middleware, as `app.use` and a router's routes take it. */
export type KoaMiddleware = (ctx: Context, next: Next) => Promise<void>;

/**
 * Koa's context, as the rules read it: its Node request (X-Forwarded-For through the rule's own
 * `trustProxy`, not Koa's `app.proxy`, so that every framework keys a request alike).
 */
const KOA_REQUEST: RequestAccess<Context> = {
  connection: (ctx) => NODE_REQUEST.connection(ctx.req),
  peerAddress: (ctx) => NODE_REQUEST.peerAddress(ctx.req),
  header: (ctx, name) => NODE_REQUEST.header(ctx.req, name),
};

/**
 * `rateLimit`'s options: the RateLimiter's (limit, windowMs, algorithm, ...) and the HTTP ones
 * of hotcount/http, whose functions (key, skip, onLimit) receive Koa's `ctx`.
 */
export type KoaRateLimitOptions = RateLimitOptions<Context>;

/** `inflightLimit`'s options: as hotcount/http's, with functions that receive Koa's `ctx`. */
export type KoaInflightLimitOptions = InflightLimitOptions<Context>;

/** Answers a refusal through Koa: status, Retry-After, a problem+json body. */
function refuse(ctx: Context, refusal: Refusal): void {
  ctx.status = refusal.status;
  ctx.set('Retry-After', String(refusal.retryAfterS));
  ctx.type = 'application/problem+json';
  ctx.body = problemBody(refusal);
}

/**
 * A rate limit as Koa middleware: the RateLimit-Policy and RateLimit fields on every response it
 * counts, 429 over the limit (the downstream middleware does not run). `limiter` is the
 * RateLimiter it decides with (for status pages and tests).
 */
export function rateLimit(options: KoaRateLimitOptions): KoaMiddleware & {
  /** The RateLimiter it decides with. */
  limiter: RateLimiter;
} {
  const rule = new RateLimitRule<Context>(options, KOA_REQUEST);
  const middleware: KoaMiddleware = async (ctx, next) => {
    const decided = rule.decide(ctx);
    if (decided !== null) {
      setField(ctx.res, 'RateLimit-Policy', decided.policy);
      setField(ctx.res, 'RateLimit', decided.state);
      if (decided.refusal !== null) {
        refuse(ctx, decided.refusal);
        return;
      }
    }
    await next();
  };
  return Object.assign(middleware, { limiter: rule.limiter as RateLimiter });
}

/**
 * A limit on a key's requests in progress as Koa middleware: 503 over it. `inflight` is the
 * Inflight it counts with.
 */
export function inflightLimit(options: KoaInflightLimitOptions): KoaMiddleware & {
  /** The Inflight it counts with. */
  inflight: Inflight;
} {
  const rule = new InflightRule<Context>(options, KOA_REQUEST);
  const middleware: KoaMiddleware = async (ctx, next) => {
    const entered = rule.enter(ctx);
    if (entered === null) return next();
    if (!(entered instanceof InflightGuard)) {
      refuse(ctx, entered);
      return;
    }
    ctx.res.once('close', () => entered.release());
    await next();
  };
  return Object.assign(middleware, { inflight: rule.inflight as Inflight });
}
