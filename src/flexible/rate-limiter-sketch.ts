/**
 * rate-limiter-flexible's limiter API in fixed memory: switching from RateLimiterMemory is one
 * line, and every call site (consume and its rejection, penalty, reward, block, get, set, delete,
 * the RateLimiterRes fields) stays as it is:
 *
 *   const limiter = new RateLimiterSketch({ points: 5, duration: 60 });
 *
 * RateLimiterMemory keeps a Map entry and a timer per key; this answers from
 * limits/expiring-counts.ts, the same algorithm over a table of fixed size and sketches: the same
 * answers for the keys the table holds, and for the others a count never under the peer's and a
 * window that never ends sooner, so never a key let through that the peer would refuse.
 *
 * It extends the peer's RateLimiterCompatibleAbstract (the base the peer exports, since 11.0, for
 * limiters it does not ship) and answers with the peer's RateLimiterRes (the peer is a peer
 * dependency of this entry point), because the peer recognises a limiter by `instanceof`: that is
 * what makes it an `insuranceLimiter` of RateLimiterRedis, a member of RateLimiterUnion, the
 * `limiter` of RLWrapperBlackAndWhite; and users' code tells a refusal from an error with
 * `instanceof RateLimiterRes` or `instanceof Error`. The limiter's settings are plain fields, as
 * the peer's limiters have them (an insured limiter sets the insurance's blockDuration and
 * execEvenly to its own); the abstract's accessors, which throw until implemented, are shadowed.
 *
 * Where a sketch cannot do what the peer's Map does, it is stricter, never more lenient: a key
 * the table lost comes back with the points the sketches counted for it (rewards not taken off,
 * since the peer may have started a new window that a take-back would leave under it), `delete`
 * forgets the table's state but the sketches keep their counts, and `get` of such a key reads
 * them. Points are integers (the peer parses them with parseInt, which reads 1e-7 as 1).
 */
import flexible from 'rate-limiter-flexible';
import {
  checkClock,
  checkCount,
  checkOptionNames,
  ExpiringCounts,
  integerIn,
  type Key,
  type LimitSketchOptions,
  MAX_EXPIRING_CAPACITY,
  rangeError,
  SATURATED,
  typeError,
  UNSHARED_SKETCH_OPTION_NAMES,
} from '../core.js';

const { RateLimiterCompatibleAbstract, RateLimiterRes } = flexible;
type RateLimiterRes = InstanceType<typeof RateLimiterRes>;

/** Options of `new RateLimiterSketch`: the peer's, and the sketches' and table's sizes. */
export interface RateLimiterSketchOptions extends Omit<LimitSketchOptions, 'shared'> {
  /** Points a key may consume per duration: a finite number. */
  points: number;
  /** Seconds a key's window lasts from its first consume; 0: it never ends. */
  duration: number;
  /** Seconds a key is blocked when it first consumes over `points`; 0 (default): not blocked. */
  blockDuration?: number;
  /** Prefix of the keys `getKey` answers. Default 'rlflx'. */
  keyPrefix?: string;
  /** Spread allowed consumes over the window by delaying them. Default false. */
  execEvenly?: boolean;
  /** The least delay of execEvenly, in ms. Default duration * 1000 / points. */
  execEvenlyMinDelayMs?: number;
  /** Keys whose state is kept exactly (rounded up to a multiple of 8). Default 8192. */
  capacity?: number;
  /** The clock, in milliseconds. Default Date.now, read at each call. */
  now?: () => number;
}

/** The options a call takes: the peer's `customDuration`, in seconds (0: never ends). */
export interface CallOptions {
  /** Seconds the window a call opens lasts, instead of the limiter's duration (0: never ends). */
  customDuration?: number;
}

const OPTION_NAMES = [
  'points',
  'duration',
  'blockDuration',
  'keyPrefix',
  'execEvenly',
  'execEvenlyMinDelayMs',
  'capacity',
  'now',
  ...UNSHARED_SKETCH_OPTION_NAMES,
];
/** The longest duration, in seconds: its milliseconds stay a safe integer. */
const MAX_SECONDS = Math.floor(Number.MAX_SAFE_INTEGER / 1000);

/** Seconds from 0 to MAX_SECONDS, or a TypeError or RangeError naming `name`. */
function seconds(name: string, value: unknown): number {
  if (typeof value !== 'number') throw typeError(name, 'a number of seconds', value);
  if (!(value >= 0 && value <= MAX_SECONDS)) {
    throw rangeError(name, `a number of seconds from 0 to ${MAX_SECONDS}`, value);
  }
  return value;
}

/**
 * rate-limiter-flexible's limiter in fixed memory. TypeError or RangeError naming the option for
 * bad options; a call with a bad argument rejects with one naming it.
 */
export class RateLimiterSketch extends RateLimiterCompatibleAbstract {
  /** Points a key may consume per duration. */
  points: number;
  /** Seconds a key's window lasts (0: it never ends). */
  duration: number;
  /** Seconds a key is blocked when it first consumes over `points` (0: not blocked). */
  override blockDuration: number;
  /** Whether allowed consumes are spread over the window. */
  override execEvenly: boolean;
  /** Prefix of the keys `getKey` answers. */
  override readonly keyPrefix: string;
  private readonly minDelayMs: number | undefined;
  private readonly counts: ExpiringCounts;

  constructor(options: RateLimiterSketchOptions) {
    super();
    if (options === null || typeof options !== 'object') {
      throw typeError('options', 'an object with points and duration', options);
    }
    checkOptionNames('options', options, OPTION_NAMES);
    const {
      points,
      duration,
      blockDuration = 0,
      keyPrefix = 'rlflx',
      execEvenly = false,
    } = options;
    if (typeof points !== 'number') throw typeError('points', 'a number', points);
    if (!Number.isFinite(points)) throw rangeError('points', 'a finite number', points);
    this.points = points;
    this.duration = seconds('duration', duration);
    this.blockDuration = seconds('blockDuration', blockDuration);
    if (typeof keyPrefix !== 'string') throw typeError('keyPrefix', 'a string', keyPrefix);
    this.keyPrefix = keyPrefix;
    if (typeof execEvenly !== 'boolean') throw typeError('execEvenly', 'a boolean', execEvenly);
    this.execEvenly = execEvenly;
    const minDelay = options.execEvenlyMinDelayMs;
    if (minDelay !== undefined && !(typeof minDelay === 'number' && minDelay >= 0)) {
      throw rangeError('execEvenlyMinDelayMs', 'a number of milliseconds >= 0', minDelay);
    }
    this.minDelayMs = minDelay;
    const capacity = options.capacity ?? 8192;
    integerIn('capacity', capacity, 1, MAX_EXPIRING_CAPACITY);
    const clock = checkClock(options.now);
    const { width, depth, epsilon, delta, engine, secret } = options;
    this.counts = new ExpiringCounts({
      width,
      depth,
      epsilon,
      delta,
      engine,
      secret,
      capacity,
      windowMs: duration * 1000,
      now: options.now === undefined ? () => Date.now() : clock,
    });
  }

  /** The duration in milliseconds. */
  get msDuration(): number {
    return this.duration * 1000;
  }

  /** The block's duration in milliseconds. */
  get msBlockDuration(): number {
    return this.blockDuration * 1000;
  }

  /** The least delay of execEvenly, in ms: as given, else duration * 1000 / points. */
  get execEvenlyMinDelayMs(): number {
    if (this.minDelayMs !== undefined) return this.minDelayMs;
    return this.points > 0 ? Math.ceil(this.msDuration / this.points) : 0;
  }

  /** The peer's key for `key`: `${keyPrefix}:${key}`, or the key itself without a prefix. */
  getKey(key: string | number): string {
    return this.keyPrefix.length > 0 ? `${this.keyPrefix}:${key}` : (key as string);
  }

  /** `key` back from what getKey answered. */
  parseKey(rlKey: string): string {
    return this.keyPrefix.length > 0 ? rlKey.substring(this.keyPrefix.length + 1) : rlKey;
  }

  /** Bytes of process memory it counts in, whatever the number of keys. */
  get memoryBytes(): number {
    return this.counts.memoryBytes;
  }

  /**
   * Consumes `pointsToConsume` (default 1) of `key`'s points: resolves a RateLimiterRes, or
   * rejects with one when the key is over `points` (blocking it for blockDuration the first
   * time), as RateLimiterMemory does.
   */
  override consume(
    key: string | number,
    pointsToConsume = 1,
    options?: CallOptions,
  ): Promise<RateLimiterRes> {
    let window: ReturnType<ExpiringCounts['add']>;
    try {
      checkCount('pointsToConsume', pointsToConsume, 0);
      window = this.counts.add(this.keyOf(key), pointsToConsume, this.durationMs(options));
    } catch (error) {
      return Promise.reject(error);
    }
    const consumed = window.value;
    if (consumed > this.points) {
      // Blocked by the consume that first takes it over (the peer's rule), at no more than
      // points + pointsToConsume. A window that came back from the sketches holds no fewer points
      // than the peer's, which may be taken over by this consume: it blocks on any.
      const most = this.points + pointsToConsume;
      if (this.blockDuration > 0 && (!window.certain || consumed <= most)) {
        const held = Math.min(consumed, most);
        this.counts.block(this.keyOf(key), held, this.blockDuration * 1000);
      }
      return Promise.reject(this.answer(this.counts.window));
    }
    const res = this.answer(window);
    if (this.execEvenly && this.points > 0 && res.msBeforeNext > 0 && !window.first) {
      let delay = Math.ceil(res.msBeforeNext / (res.remainingPoints + 2));
      if (delay < this.execEvenlyMinDelayMs) delay = consumed * this.execEvenlyMinDelayMs;
      // Told after the delay, as the peer tells it.
      const msBeforeNext = Math.max(res.msBeforeNext - delay, 0);
      const later = new RateLimiterRes(res.remainingPoints, msBeforeNext, consumed, false);
      return new Promise((resolve) => setTimeout(resolve, delay, later));
    }
    return Promise.resolve(res);
  }

  /** Adds `points` (default 1) to `key`'s window without refusing. */
  override penalty(
    key: string | number,
    points = 1,
    options?: CallOptions,
  ): Promise<RateLimiterRes> {
    return this.change(key, points, options, 1);
  }

  /** Takes `points` (default 1) off `key`'s window (see the top comment for a key the table lost). */
  override reward(
    key: string | number,
    points = 1,
    options?: CallOptions,
  ): Promise<RateLimiterRes> {
    return this.change(key, points, options, -1);
  }

  /** Blocks `key` for `secDuration` seconds (0: for ever): its points set to `points` + 1. */
  override block(key: string | number, secDuration: number): Promise<RateLimiterRes> {
    try {
      const ms = seconds('secDuration', secDuration) * 1000;
      const points = this.points + 1;
      this.counts.set(this.keyOf(key), points, ms);
      return Promise.resolve(new RateLimiterRes(0, ms === 0 ? -1 : ms, points));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * Sets `key`'s points to `points` for `secDuration` seconds. As RateLimiterMemory: 0 keeps them
   * for ever, and so does no secDuration at all, though the answer then tells the duration.
   */
  override set(
    key: string | number,
    points: number,
    secDuration?: number,
  ): Promise<RateLimiterRes> {
    try {
      integerIn('points', points, -SATURATED, SATURATED);
      const ms = secDuration === undefined ? 0 : seconds('secDuration', secDuration) * 1000;
      this.counts.set(this.keyOf(key), points, ms);
      const told = (secDuration ?? this.duration) * 1000;
      return Promise.resolve(new RateLimiterRes(0, told === 0 ? -1 : told, points));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** `key`'s window, or null when it has none (as far as the table and the sketches show). */
  override get(key: string | number): Promise<RateLimiterRes | null> {
    try {
      if (!this.counts.read(this.keyOf(key))) return Promise.resolve(null);
      return Promise.resolve(this.answer(this.counts.window));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** Ends `key`'s window; resolves whether one was running. */
  override delete(key: string | number): Promise<boolean> {
    try {
      return Promise.resolve(this.counts.remove(this.keyOf(key)));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** The RateLimiterRes of a window, as the peer's MemoryStorage makes it. */
  private answer(window: ReturnType<ExpiringCounts['add']>): RateLimiterRes {
    const msBeforeNext =
      window.endsAt === Number.POSITIVE_INFINITY ? -1 : window.endsAt - window.time;
    return new RateLimiterRes(
      Math.max(this.points - window.value, 0),
      msBeforeNext,
      window.value,
      window.first,
    );
  }

  /** penalty (sign 1) or reward (sign -1): adds points, never refuses. */
  private change(
    key: string | number,
    points: number,
    options: CallOptions | undefined,
    sign: 1 | -1,
  ): Promise<RateLimiterRes> {
    try {
      checkCount('points', points, 0);
      const window = this.counts.add(
        this.keyOf(key),
        sign > 0 ? points : 0 - points,
        this.durationMs(options),
      );
      return Promise.resolve(this.answer(window));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** The window a call opens, in ms: its customDuration, else the limiter's duration. */
  private durationMs(options: CallOptions | undefined): number {
    if (options === undefined || options === null || options.customDuration === undefined) {
      return this.msDuration;
    }
    return seconds('customDuration', options.customDuration) * 1000;
  }

  /**
   * The key the counts see. With a prefix the peer keys its Map by `${keyPrefix}:${key}`, so 1
   * and '1' are one key; without one, by the key itself, where they are two (as for the hasher).
   */
  private keyOf(key: unknown): Key {
    if (typeof key === 'string') return key;
    if (typeof key === 'number' || typeof key === 'bigint') {
      return this.keyPrefix.length > 0 ? String(key) : key;
    }
    throw typeError('key', 'a string or a number', key);
  }
}
