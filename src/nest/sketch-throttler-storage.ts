/**
 * A storage for @nestjs/throttler 6: its users keep the module, the guard, the decorators and
 * their named throttlers, and swap the default storage for fixed memory in one line:
 *
 *   ThrottlerModule.forRoot({ throttlers: [{ ttl: 60_000, limit: 100 }], storage: new SketchThrottlerStorage() })
 *
 * The default storage (ThrottlerStorageService) keeps a record per key that it never deletes and
 * a timer per hit; this one answers `increment` from limits/blocking-windows.ts, the default's
 * algorithm (a sliding window, a block for the hit over the limit, a start-over after it) over a
 * table of fixed size and sketches: the same answers for the clients it holds while their hits
 * fall on its sub-windows, and never a request let through that the default refuses (a property
 * test holds both against the real ThrottlerStorageService). Every unit is the throttler's: ttl
 * and blockDuration in milliseconds, timeToExpire and timeToBlockExpire in whole seconds rounded
 * up, as the default computes them.
 */
import type { ThrottlerStorage } from '@nestjs/throttler';
import {
  BlockingCall,
  BlockingWindows,
  checkClock,
  checkOptionNames,
  integerIn,
  type LimitSketchOptions,
  MAX_BLOCKING_CAPACITY,
  rangeError,
  typeError,
  UNSHARED_SKETCH_OPTION_NAMES,
} from '../core.js';

/** Options of `new SketchThrottlerStorage`: the sketches' size, the table's, the clock. */
export interface SketchThrottlerStorageOptions extends Omit<LimitSketchOptions, 'shared'> {
  /** Clients whose state is kept exactly (rounded up to a multiple of 8). Default 4096. */
  capacity?: number;
  /** The clock, in milliseconds. Default Date.now, read at each call. */
  now?: () => number;
}

/** What `increment` resolves: @nestjs/throttler's ThrottlerStorageRecord. */
export interface SketchThrottlerRecord {
  /** The key's hits in its window (never under the default storage's count). */
  totalHits: number;
  /** Seconds until the key's window ends, rounded up. */
  timeToExpire: number;
  /** Whether the request is refused: the guard answers 429. */
  isBlocked: boolean;
  /** Seconds until the key's block ends, rounded up (0 or less when none runs). */
  timeToBlockExpire: number;
}

const OPTION_NAMES = ['capacity', 'now', ...UNSHARED_SKETCH_OPTION_NAMES];

/**
 * @nestjs/throttler's `storage` in fixed memory. TypeError or RangeError naming the option for
 * bad options; `increment` rejects with one naming the parameter for a bad argument.
 */
export class SketchThrottlerStorage implements ThrottlerStorage {
  private readonly windows: BlockingWindows;
  private readonly call = new BlockingCall();

  constructor(options: SketchThrottlerStorageOptions = {}) {
    if (options === null || typeof options !== 'object') {
      throw typeError('options', 'an object', options);
    }
    checkOptionNames('options', options, OPTION_NAMES);
    if (options.capacity !== undefined) {
      integerIn('capacity', options.capacity, 1, MAX_BLOCKING_CAPACITY);
    }
    checkClock(options.now);
    this.windows = new BlockingWindows(options);
  }

  /** Bytes of process memory, whatever the number of keys (each new (throttler, ttl) adds sketches). */
  get memoryBytes(): number {
    return this.windows.memoryBytes;
  }

  /** Counts a request of `key` under the throttler `throttlerName`, as the guard calls it. */
  async increment(
    key: string,
    ttl: number,
    limit: number,
    blockDuration: number,
    throttlerName: string,
  ): Promise<SketchThrottlerRecord> {
    if (typeof key !== 'string') throw typeError('key', 'a string', key);
    if (typeof ttl !== 'number') throw typeError('ttl', 'a number of milliseconds', ttl);
    if (!(ttl >= 1 && ttl <= Number.MAX_SAFE_INTEGER)) {
      throw rangeError('ttl', 'a number of milliseconds from 1 to 2^53 - 1', ttl);
    }
    if (typeof limit !== 'number') throw typeError('limit', 'a number', limit);
    if (!(limit >= 0)) throw rangeError('limit', 'a number >= 0', limit);
    if (typeof blockDuration !== 'number') {
      throw typeError('blockDuration', 'a number of milliseconds', blockDuration);
    }
    if (!(blockDuration >= 0 && blockDuration <= Number.MAX_SAFE_INTEGER)) {
      throw rangeError(
        'blockDuration',
        'a number of milliseconds from 0 to 2^53 - 1',
        blockDuration,
      );
    }
    if (typeof throttlerName !== 'string') {
      throw typeError('throttlerName', 'a string', throttlerName);
    }
    const call = this.call;
    call.scope = throttlerName;
    call.ttlMs = ttl;
    call.limit = limit;
    call.blockMs = blockDuration;
    this.windows.hit(key, call);
    return {
      totalHits: call.totalHits,
      timeToExpire: Math.ceil((call.expiresAt - call.time) / 1000),
      isBlocked: call.blocked,
      timeToBlockExpire: Math.ceil((call.blockedUntil - call.time) / 1000),
    };
  }
}
