/**
 * A store for express-rate-limit: its users keep the middleware (headers, handler, skips,
 * validations) and swap its Map of clients for a sketch in one line:
 *
 *   app.use(rateLimit({ windowMs: 60_000, limit: 100, store: new ExpressRateLimitStore() }));
 *
 * Counts go to a `Rate` (three sketches, whatever the number of clients), whose windows are
 * aligned to the clock (see limits/windows.ts) rather than started by each client's first hit:
 * `totalHits` is the client's count in the current window, `resetTime` that window's end.
 *
 * A sketch cannot forget one key: its cells hold the counts of every key hashed to them, and
 * lowering them would lower those keys' counts too. So `resetKey` and `decrement` touch no cell.
 * They write an adjustment beside the sketch, an exact map from key to an offset subtracted from
 * that key's estimate, for the current window only:
 *
 * - `resetKey(k)` sets k's offset to k's estimate at that moment. Every cell only grows within a
 *   window (plain and conservative update alike, and the estimate is their minimum), so from then
 *   on `estimate - offset` is at least the hits k made since the reset: k starts over, never
 *   below its true count since, and no other key's count moves.
 * - `decrement(k)` (express-rate-limit's skipSuccessfulRequests / skipFailedRequests) adds 1 to
 *   k's offset, never past k's estimate. A request counted at the end of one window and
 *   decremented in the next lowers k's count in the new window by that one request: only k's,
 *   and only by requests that were not to be counted.
 *
 * The map is bounded (`maxAdjusted` keys, default 10,000) and emptied when the window turns.
 * When it is full, the oldest adjustment is forgotten: that key's count goes back up to its
 * estimate, stricter, never lower. Memory is the sketches and at most that many keys.
 */
import { checkOptionNames, integerIn, typeError } from '../errors.js';
import { type LimitSketchOptions, Rate } from '../index.js';
import { UNSHARED_SKETCH_OPTION_NAMES } from '../limits/options.js';

/** Options of `new ExpressRateLimitStore`: the sketch's, `maxAdjusted`, the rule, the clock. */
export interface ExpressRateLimitStoreOptions extends Omit<LimitSketchOptions, 'shared'> {
  /** Keys whose count resetKey or decrement adjusted, remembered per window. Default 10,000. */
  maxAdjusted?: number;
  /** Conservative update (tighter counts). Default true. */
  conservative?: boolean;
  /** The clock, in milliseconds. Default Date.now. */
  now?: () => number;
}

/** What express-rate-limit passes to `init` (the part read here). */
/** What express-rate-limit passes to `init`: its window. */
export interface InitOptions {
  /** The window, in milliseconds. */
  windowMs: number;
}

/** What express-rate-limit expects of `increment` and `get`. */
export interface ClientRateLimitInfo {
  /** The client's requests in the current window (never below the true count). */
  totalHits: number;
  /** When the current window ends. */
  resetTime: Date;
}

const OPTION_NAMES = ['maxAdjusted', 'conservative', 'now', ...UNSHARED_SKETCH_OPTION_NAMES];

/**
 * express-rate-limit's `store`, in fixed memory: the client's hits in sketches instead of a Map
 * of clients. TypeError or RangeError naming the option for bad options.
 */
export class ExpressRateLimitStore {
  /** Counts live in this process (express-rate-limit's double-count check reads it). */
  readonly localKeys = true;
  private readonly options: Omit<ExpressRateLimitStoreOptions, 'maxAdjusted'>;
  private readonly maxAdjusted: number;
  private counts: Rate | null = null;
  /** Offsets of the window starting at `adjustedStart` (see the top comment). */
  private readonly adjusted = new Map<string, number>();
  private adjustedStart = Number.NaN;

  constructor(options: ExpressRateLimitStoreOptions = {}) {
    if (options === null || typeof options !== 'object') {
      throw typeError('options', 'an object', options);
    }
    checkOptionNames('options', options, OPTION_NAMES);
    const { maxAdjusted, ...rest } = options;
    this.maxAdjusted = integerIn('maxAdjusted', maxAdjusted ?? 10_000, 0, 1 << 24);
    this.options = { conservative: true, ...rest };
    new Rate({ ...this.options, windowMs: 1000, width: 1, depth: 1 }); // validates the rest now
  }

  /** Called by express-rate-limit with its options: the window comes from there. */
  init(options: InitOptions): void {
    if (options === null || typeof options !== 'object') {
      throw typeError('options', 'an object', options);
    }
    this.counts = new Rate({ ...this.options, windowMs: options.windowMs });
    this.adjusted.clear();
  }

  private rate(): Rate {
    if (this.counts === null) {
      throw new TypeError(
        'ExpressRateLimitStore: init({ windowMs }) first (express-rate-limit calls it)',
      );
    }
    return this.counts;
  }

  /** Counts a hit of `key`; its hits in the current window and when that window ends. */
  increment(key: string): ClientRateLimitInfo {
    const rate = this.rate();
    return this.info(rate, key, rate.observe(key));
  }

  /** The same, without counting. */
  get(key: string): ClientRateLimitInfo {
    const rate = this.rate();
    return this.info(rate, key, rate.peek(key));
  }

  /** Takes back one hit of `key` (see the top comment). */
  decrement(key: string): void {
    const rate = this.rate();
    const estimate = rate.peek(key);
    const offset = this.offsetOf(rate, key);
    if (offset < estimate) this.adjust(key, offset + 1);
  }

  /** `key` starts over (see the top comment); no other key's count moves. */
  resetKey(key: string): void {
    const rate = this.rate();
    const estimate = rate.peek(key);
    this.offsetOf(rate, key); // empties the map if the window turned
    this.adjust(key, estimate);
  }

  /** Every key starts over: new, empty sketches. */
  resetAll(): void {
    const rate = this.rate();
    this.counts = new Rate({ ...this.options, windowMs: rate.windowMs });
    this.adjusted.clear();
  }

  /** Nothing to stop: no timer runs (express-rate-limit calls it on shutdown). */
  shutdown(): void {}

  private info(rate: Rate, key: string, estimate: number): ClientRateLimitInfo {
    const offset = this.adjusted.size === 0 ? 0 : this.offsetOf(rate, key);
    return {
      totalHits: estimate - offset,
      resetTime: new Date(rate.windowStart + rate.windowMs),
    };
  }

  /** `key`'s offset in the window of the last call; the map empties when the window turned. */
  private offsetOf(rate: Rate, key: string): number {
    if (rate.windowStart !== this.adjustedStart) {
      this.adjusted.clear();
      this.adjustedStart = rate.windowStart;
    }
    return this.adjusted.get(key) ?? 0;
  }

  private adjust(key: string, offset: number): void {
    const adjusted = this.adjusted;
    if (!adjusted.has(key) && adjusted.size >= this.maxAdjusted) {
      if (this.maxAdjusted === 0) return;
      // The oldest adjustment goes: that key counts its full estimate again (stricter).
      adjusted.delete(adjusted.keys().next().value as string);
    }
    adjusted.set(key, offset);
  }
}
