/**
 * hotcount/koa: the limits as Koa middleware (koa is a peer dependency, imported for its types
 * only).
 *
 *   import { rateLimit, inflightLimit } from 'hotcount/koa';
 *   app.use(rateLimit({ limit: 100, windowMs: 60_000 }));
 *   app.use(inflightLimit({ limit: 10, key: (ctx) => ctx.get('x-api-key') || ctx.ip }));
 *
 * The rules, fields, refusals and client keys of hotcount/http; the functions of the options
 * receive Koa's `ctx`. A route of @koa/router takes its own middleware, with its own limit.
 *
 * @module
 */
export type { ClientKeyOptions, InflightDecision } from '../http/index.js';
export {
  inflightLimit,
  type KoaInflightLimitOptions,
  type KoaMiddleware,
  type KoaRateLimitOptions,
  rateLimit,
} from './middleware.js';
