/**
 * A store for @fastify/rate-limit: its users keep the plugin (headers, hooks, ban, groups) and
 * swap its memory for fixed memory in one line:
 *
 *   await app.register(rateLimit, { max: 100, timeWindow: 60_000, store: FastifyRateLimitStore });
 *
 * The plugin's LocalStore is an LRU of 5,000 clients by default: a client that rotates through
 * more keys evicts the counters of the others, and their limits start over. Here each store
 * (the plugin's, and one per route that `child` makes, as LocalStore does) counts in fixed
 * memory, and a count is never forgotten before its window ends.
 *
 * Windows, by default, are the plugin's own: a client's window starts at its first request
 * (limits/client-windows.ts: recent clients exact, every request also in sketches, so that a
 * client pushed out of the table is never let through sooner), with `continueExceeding` and
 * `exponentialBackoff` as LocalStore has them. `FastifyRateLimitStore.with({ windows: 'aligned' })`
 * counts in windows aligned to the clock instead (a `Rate`: three sketches, the same windows in
 * every process), where `ttl` is the time to the window's end, and which refuses
 * `continueExceeding` and `exponentialBackoff` with a RangeError: they move one client's window.
 */
import {
  ClientWindows,
  checkOptionNames,
  checkStoreWindows,
  type LimitSketchOptions,
  Rate,
  rangeError,
  typeError,
  UNSHARED_SKETCH_OPTION_NAMES,
} from '../core.js';

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
  /** A request over the limit starts the client's window again (per-client windows only). */
  continueExceeding?: unknown;
  /** As continueExceeding, and the reported time doubles per request over (per-client only). */
  exponentialBackoff?: unknown;
}

/** The store's own options, given with `FastifyRateLimitStore.with`. */
export interface FastifyStoreOptions extends Omit<LimitSketchOptions, 'shared'> {
  /**
   * 'client' (default): a client's window starts at its first request, as with the plugin's
   * LocalStore. 'aligned': windows aligned to the clock, the same for every client.
   */
  windows?: 'client' | 'aligned';
  /** Per-client windows: clients whose state is kept exactly per route. Default 8192. */
  capacity?: number;
}

const STORE_OPTION_NAMES = ['windows', 'capacity', ...UNSHARED_SKETCH_OPTION_NAMES];

/**
 * @fastify/rate-limit's `store`, in fixed memory (see the top comment). The plugin constructs
 * it; `with` sets its options.
 */
export class FastifyRateLimitStore {
  private readonly perWindow = new Map<number, ClientWindows | Rate>();
  private readonly options: FastifyStoreOptions;
  private readonly continueExceeding: boolean;
  private readonly exponentialBackoff: boolean;

  constructor(params: FastifyStoreParams = {}, options: FastifyStoreOptions = {}) {
    if (params === null || typeof params !== 'object') {
      throw typeError('params', 'an object', params);
    }
    this.continueExceeding = params.continueExceeding === true;
    this.exponentialBackoff = params.exponentialBackoff === true;
    if (options.windows === 'aligned') {
      for (const name of ['continueExceeding', 'exponentialBackoff'] as const) {
        if (params[name] === true) {
          throw rangeError(
            name,
            "false with FastifyRateLimitStore's aligned windows (the same for every client)",
            true,
          );
        }
      }
    }
    this.options = options;
  }

  /**
   * The store class with these options: `windows`, `capacity` and the sketches' (width, depth,
   * secret, engine). TypeError or RangeError naming a bad option.
   */
  static with(options: FastifyStoreOptions): typeof FastifyRateLimitStore {
    checkStoreOptions(options);
    return class extends FastifyRateLimitStore {
      constructor(params: object = {}) {
        super(params, options);
      }
    };
  }

  private counter(timeWindow: number): ClientWindows | Rate {
    let counter = this.perWindow.get(timeWindow);
    if (counter === undefined) {
      const { windows, capacity, ...sketch } = this.options;
      const now = () => Date.now(); // read at each call (the plugin's tests mock Date)
      counter =
        windows === 'aligned'
          ? new Rate({ ...sketch, windowMs: timeWindow, now })
          : new ClientWindows({
              ...sketch,
              windowMs: timeWindow,
              continueExceeding: this.continueExceeding,
              exponentialBackoff: this.exponentialBackoff,
              ...(capacity === undefined ? {} : { capacity }),
              now,
            });
      this.perWindow.set(timeWindow, counter);
    }
    return counter;
  }

  /** Counts a request of `key` in a window of `timeWindow` ms, and answers its count. */
  incr(key: string, callback: FastifyStoreCallback, timeWindow: number, max?: number): void {
    this.answer(key, callback, timeWindow, max, true);
  }

  /** The same, without counting (the plugin's `{ increment: false }`). */
  read(key: string, callback: FastifyStoreCallback, timeWindow: number, max?: number): void {
    this.answer(key, callback, timeWindow, max, false);
  }

  private answer(
    key: string,
    callback: FastifyStoreCallback,
    timeWindow: number,
    max: number | undefined,
    count: boolean,
  ): void {
    let result: { current: number; ttl: number };
    try {
      const counter = this.counter(Math.round(timeWindow));
      const limit = typeof max === 'number' ? max : Number.POSITIVE_INFINITY;
      if (counter instanceof ClientWindows) {
        result = count ? counter.hit(key, limit) : counter.read(key, limit);
      } else {
        const current = count ? counter.observe(key) : counter.peek(key);
        // A read that finds nothing: an estimate is never under the key's count, so 0 means no
        // request of the key in this window, which the plugin's LocalStore answers with ttl 0.
        const ttl = counter.windowStart + counter.windowMs - Date.now();
        result =
          current === 0 ? { current, ttl: 0 } : { current, ttl: Math.max(1, Math.ceil(ttl)) };
      }
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

/** The options of `with`, checked: windows, capacity, the sketches' (one made, small). */
function checkStoreOptions(options: FastifyStoreOptions): void {
  if (options === null || typeof options !== 'object') {
    throw typeError('options', 'an object', options);
  }
  checkOptionNames('options', options, STORE_OPTION_NAMES);
  const { windows, capacity, ...sketch } = options;
  checkStoreWindows(windows, capacity);
  new Rate({ ...sketch, width: 1, depth: 1, windowMs: 1000 }); // the sketches' options
}
