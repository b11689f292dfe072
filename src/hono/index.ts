/**
 * hotcount/hono: the limits as Hono middleware, on every runtime Hono runs on (hono is a peer
 * dependency, imported for its types only).
 *
 *   import { rateLimit, inflightLimit } from 'hotcount/hono';
 *   app.use(rateLimit({ limit: 100, windowMs: 60_000 }));
 *   app.use('/api/*', inflightLimit({ limit: 10, key: (c) => c.req.header('x-api-key') ?? 'anonymous' }));
 *
 * The rules, fields, refusals and client keys of hotcount/http; the functions of the options
 * receive Hono's `c`. A route or a path pattern takes its own middleware, with its own limit.
 * For hono-rate-limiter's users, `HonoRateLimiterStore` takes its MemoryStore's place.
 *
 * @module
 */
export type {
  ClientKeyOptions,
  ClientRateLimitInfo,
  ExpressRateLimitStoreOptions as HonoRateLimiterStoreOptions,
  InflightDecision,
} from '../http/index.js';
export { HonoRateLimiterStore } from './hono-rate-limiter-store.js';
export {
  type HonoInflightLimitOptions,
  type HonoRateLimitOptions,
  inflightLimit,
  rateLimit,
} from './middleware.js';
