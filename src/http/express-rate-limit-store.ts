/**
 * A store for express-rate-limit: its users keep the middleware (headers, handler, skips,
 * validations) and swap its Map of clients for a sketch in one line:
 *
 *   app.use(rateLimit({ windowMs: 60_000, limit: 100, store: new ExpressRateLimitStore() }));
 *
 * By default a client's window starts at its first hit, as with express-rate-limit's MemoryStore
 * (limits/client-windows.ts: recent clients exact in a table of fixed size, every hit also in
 * sketches, so that a client pushed out of the table is never let through sooner; decrement,
 * resetKey and get as MemoryStore has them).
 *
 * With `windows: 'aligned'`, counts go to a `Rate` (three sketches, whatever the number of
 * clients), whose windows are aligned to the clock (see limits/windows.ts): `totalHits` is the
 * client's count in the current window, `resetTime` that window's end. The rest of this comment
 * is about that mode.
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
import {
  ClientWindows,
  checkOptionNames,
  checkStoreWindows,
  integerIn,
  type LimitSketchOptions,
  Rate,
  typeError,
  UNSHARED_SKETCH_OPTION_NAMES,
} from '../core.js';

/** Options of `new ExpressRateLimitStore`: the sketch's, `maxAdjusted`, the rule, the clock. */
export interface ExpressRateLimitStoreOptions extends Omit<LimitSketchOptions, 'shared'> {
  /**
   * 'client' (default): a client's window starts at its first hit, as with MemoryStore (see
   * limits/client-windows.ts). 'aligned': windows aligned to the clock, the same for every client
   * (the adjustments of the top comment).
   */
  windows?: 'client' | 'aligned';
  /** Per-client windows: clients whose state is kept exactly. Default 8192. */
  capacity?: number;
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

const OPTION_NAMES = [
  'windows',
  'capacity',
  'maxAdjusted',
  'conservative',
  'now',
  ...UNSHARED_SKETCH_OPTION_NAMES,
];

/**
 * express-rate-limit's `store`, in fixed memory: the client's hits in sketches instead of a Map
 * of clients. TypeError or RangeError naming the option for bad options.
 */
export class ExpressRateLimitStore {
  /** Counts live in this process (express-rate-limit's double-count check reads it). */
  readonly localKeys = true;
  private readonly options: Omit<
    ExpressRateLimitStoreOptions,
    'maxAdjusted' | 'windows' | 'capacity'
  >;
  private readonly maxAdjusted: number;
  private readonly windows: 'client' | 'aligned';
  private readonly capacity: number | undefined;
  private counts: Rate | null = null;
  /** Per-client windows (the default), made by init. */
  private clients: ClientWindows | null = null;
  /** Offsets of the window starting at `adjustedStart` (see the top comment). */
  private readonly adjusted = new Map<string, number>();
  private adjustedStart = Number.NaN;

  constructor(options: ExpressRateLimitStoreOptions = {}) {
    if (options === null || typeof options !== 'object') {
      throw typeError('options', 'an object', options);
    }
    checkOptionNames('options', options, OPTION_NAMES);
    const { maxAdjusted, windows, capacity, ...rest } = options;
    this.windows = checkStoreWindows(windows, capacity);
    this.capacity = capacity;
    this.maxAdjusted = integerIn('maxAdjusted', maxAdjusted ?? 10_000, 0, 1 << 24);
    this.options = { conservative: true, ...rest };
    new Rate({ ...this.options, windowMs: 1000, width: 1, depth: 1 }); // validates the rest now
  }

  private makeClients(windowMs: number): ClientWindows {
    const { conservative: _, ...sketch } = this.options;
    return new ClientWindows({
      ...sketch,
      ...(this.capacity === undefined ? {} : { capacity: this.capacity }),
      windowMs,
    });
  }

  /** Bytes of process memory it counts in (0 before init): fixed, whatever the clients. */
  get memoryBytes(): number {
    if (this.clients !== null) return this.clients.memoryBytes;
    return this.counts?.memoryBytes ?? 0;
  }

  /** Called by express-rate-limit with its options: the window comes from there. */
  init(options: InitOptions): void {
    if (options === null || typeof options !== 'object') {
      throw typeError('options', 'an object', options);
    }
    if (this.windows === 'client') {
      this.clients = this.makeClients(options.windowMs);
      return;
    }
    this.counts = new Rate({ ...this.options, windowMs: options.windowMs });
    this.adjusted.clear();
  }

  private clientWindows(): ClientWindows | null {
    if (this.windows === 'aligned') return null;
    if (this.clients === null) {
      throw new TypeError(
        'ExpressRateLimitStore: init({ windowMs }) first (express-rate-limit calls it)',
      );
    }
    return this.clients;
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
    const clients = this.clientWindows();
    if (clients !== null) {
      const { current, ttl } = clients.hit(key, Number.POSITIVE_INFINITY);
      return { totalHits: current, resetTime: new Date(clients.time + ttl) };
    }
    const rate = this.rate();
    return this.info(rate, key, rate.observe(key));
  }

  /**
   * The same, without counting. Per-client windows: undefined for a client with nothing counted,
   * as MemoryStore answers.
   */
  get(key: string): ClientRateLimitInfo | undefined {
    const clients = this.clientWindows();
    if (clients !== null) {
      const state = clients.state(key);
      return state === null
        ? undefined
        : { totalHits: state.current, resetTime: new Date(state.endsAt) };
    }
    const rate = this.rate();
    return this.info(rate, key, rate.peek(key));
  }

  /** Takes back one hit of `key` (per-client windows: ClientWindows.decrement; else the top comment). */
  decrement(key: string): void {
    const clients = this.clientWindows();
    if (clients !== null) {
      clients.decrement(key);
      return;
    }
    const rate = this.rate();
    const estimate = rate.peek(key);
    const offset = this.offsetOf(rate, key);
    if (offset < estimate) this.adjust(key, offset + 1);
  }

  /** `key` starts over; no other key's count moves (aligned windows: see the top comment). */
  resetKey(key: string): void {
    const clients = this.clientWindows();
    if (clients !== null) {
      clients.forget(key);
      return;
    }
    const rate = this.rate();
    const estimate = rate.peek(key);
    this.offsetOf(rate, key); // empties the map if the window turned
    this.adjust(key, estimate);
  }

  /** Every key starts over: new, empty sketches. */
  resetAll(): void {
    const clients = this.clientWindows();
    if (clients !== null) {
      this.clients = this.makeClients(clients.windowMs);
      return;
    }
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
