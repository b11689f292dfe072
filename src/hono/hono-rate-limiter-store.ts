/**
 * A store for hono-rate-limiter: its users keep the middleware (its headers, handler, skips) and
 * swap its MemoryStore for fixed memory in one line:
 *
 *   app.use(rateLimiter({ windowMs: 60_000, limit: 100, keyGenerator, store: new HonoRateLimiterStore() }));
 *
 * hono-rate-limiter is a port of express-rate-limit, and its Store is the same interface (init
 * with the window, increment answering totalHits and resetTime, decrement, resetKey, get), its
 * MemoryStore the same algorithm: a client's window starts at its first hit. So this is
 * ExpressRateLimitStore (http/express-rate-limit-store.ts: recent clients exact in a table of
 * fixed size, every hit also in sketches, so that a client pushed out of the table is never
 * let through sooner) under the name a Hono user looks for, with its options; a property test
 * holds it against hono-rate-limiter's own MemoryStore. One answer differs, on purpose: `get`
 * of a client whose window has ended is undefined (as express-rate-limit 8.7's MemoryStore
 * answers), where hono-rate-limiter's MemoryStore still answers the ended window.
 */
import { ExpressRateLimitStore } from '../http/express-rate-limit-store.js';

/**
 * hono-rate-limiter's `store`: per-client windows in fixed memory, with ExpressRateLimitStore's
 * options (`windows`, `capacity`, the sketch's size, `now`).
 */
export class HonoRateLimiterStore extends ExpressRateLimitStore {}
