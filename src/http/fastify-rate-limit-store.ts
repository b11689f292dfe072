/**
 * A store for @fastify/rate-limit: its users keep the plugin (headers, hooks, ban, groups) and
 * swap its memory for a sketch in one line:
 *
 *   await app.register(rateLimit, { max: 100, timeWindow: 60_000, store: FastifyRateLimitStore });
 *
 * The plugin's LocalStore is an LRU of 5,000 clients by default: a client that rotates through
 * more keys evicts the counters of the others, and their limits start over. Here each store
 * (the plugin's, and one per route that `child` makes, as LocalStore does) counts in a `Rate`:
 * three sketches, whatever the number of clients, and a count is never forgotten before its
 * window ends. Windows are aligned to the clock (see limits/windows.ts), not started by each
 * client's first request: `current` is the client's count in the current window, `ttl` the
 * time until that window ends. Sketch options: `FastifyRateLimitStore.with({ width, ... })`.
 *
 * `continueExceeding` and `exponentialBackoff` move one client's window, which clock-aligned
 * windows shared by every key cannot do: the store refuses them with a RangeError rather than
 * ignore them.
 */
import { rangeError, typeError } from '../errors.js';
import { type LimitSketchOptions, Rate } from '../index.js';

/** How a store answers @fastify/rate-limit: an error, or the client's count and time left. */
export type FastifyStoreCallback = (
  error: Error | null,
  result?: {
    /** The client's requests in the current window, this one included when counted. */
    current: number;
    /** Milliseconds until the current window ends (at least 1). */
    ttl: number;
  },
) => void;

/** What @fastify/rate-limit passes to a store's constructor and `child` (the parts read here). */
export interface FastifyStoreParams {
  /** Refused when true (a RangeError): see the top comment. */
  continueExceeding?: unknown;
  /** Refused when true (a RangeError): see the top comment. */
  exponentialBackoff?: unknown;
}

/**
 * @fastify/rate-limit's `store`, in fixed memory: each route's counts in a Rate (three
 * sketches) instead of an LRU of clients. The plugin constructs it; `with` sets its sketch
 * options.
 */
export class FastifyRateLimitStore {
  private readonly rates = new Map<number, Rate>();
  private readonly sketch: LimitSketchOptions;

  constructor(params: FastifyStoreParams = {}, sketch: LimitSketchOptions = {}) {
    if (params === null || typeof params !== 'object')
      throw typeError('params', 'an object', params);
    for (const name of ['continueExceeding', 'exponentialBackoff'] as const) {
      if (params[name] === true) {
        throw rangeError(
          name,
          'false with FastifyRateLimitStore (its windows are aligned to the clock for every client)',
          true,
        );
      }
    }
    this.sketch = sketch;
  }

  /** The store class with these sketch options (width, depth, secret, engine, shared). */
  static with(sketch: LimitSketchOptions): typeof FastifyRateLimitStore {
    new Rate({ windowMs: 1000, ...sketch, width: 1, depth: 1 }); // validates the names and kinds
    return class extends FastifyRateLimitStore {
      constructor(params: object = {}) {
        super(params, sketch);
      }
    };
  }

  private rate(timeWindow: number): Rate {
    let rate = this.rates.get(timeWindow);
    if (rate === undefined) {
      rate = new Rate({ ...this.sketch, windowMs: timeWindow });
      this.rates.set(timeWindow, rate);
    }
    return rate;
  }

  /** Counts a request of `key` in a window of `timeWindow` ms, and answers its count. */
  incr(key: string, callback: FastifyStoreCallback, timeWindow: number): void {
    this.answer(key, callback, timeWindow, true);
  }

  /** The same, without counting (the plugin's `{ increment: false }`). */
  read(key: string, callback: FastifyStoreCallback, timeWindow: number): void {
    this.answer(key, callback, timeWindow, false);
  }

  private answer(
    key: string,
    callback: FastifyStoreCallback,
    timeWindow: number,
    count: boolean,
  ): void {
    let result: { current: number; ttl: number };
    try {
      const rate = this.rate(Math.round(timeWindow));
      const current = count ? rate.observe(key) : rate.peek(key);
      // A read that finds nothing: an estimate is never under the key's count, so 0 means no
      // request of the key in this window, which the plugin's LocalStore answers with ttl 0.
      const ttl = rate.windowStart + rate.windowMs - Date.now();
      result = current === 0 ? { current, ttl: 0 } : { current, ttl: Math.max(1, Math.ceil(ttl)) };
    } catch (error) {
      callback(error as Error);
      return;
    }
    callback(null, result);
  }

  /** A store for one route: counts of its own, as LocalStore's `child`. */
  child(routeOptions: object): FastifyRateLimitStore {
    return new (this.constructor as new (params: object) => FastifyRateLimitStore)(routeOptions);
  }
}
