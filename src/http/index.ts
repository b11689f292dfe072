/**
 * hotcount/http: limits as Connect-style middleware, for node:http and Express.
 *
 *   import { rateLimit, inflightLimit } from 'hotcount/http';
 *   app.use(rateLimit({ limit: 100, windowMs: 60_000 }));          // Express
 *   const limit = inflightLimit({ limit: 10 });                     // node:http
 *   http.createServer((req, res) => limit(req, res, () => handler(req, res)));
 *
 * @module
 */
export { type ClientKeyOptions, type KeyOption, normalizeAddress } from './client-key.js';
export {
  type ClientRateLimitInfo,
  ExpressRateLimitStore,
  type ExpressRateLimitStoreOptions,
  type InitOptions,
} from './express-rate-limit-store.js';
export {
  type InflightDecision,
  type InflightLimitOptions,
  inflightLimit,
} from './inflight-limit.js';
export type { LimitHttpOptions, Middleware, Next } from './middleware.js';
export { type RateLimitOptions, rateLimit } from './rate-limit.js';
