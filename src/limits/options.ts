/**
 * Options every limit shares: the sketch's sizing, secret, engine and whether it is shared
 * across worker_threads (see CountMinOptions). A limit picks its update rule itself (a rate
 * limiter needs the conservative rule, an inflight count the plain one), so `conservative` is
 * not among them.
 */
import { integerIn, typeError } from '../errors.js';
import { randomSecret } from '../hash/secret.js';
import { SATURATED } from '../sketch/counters.js';
import type { CountMinOptions, EngineName } from '../sketch/sketch-options.js';

/**
 * The sketch options every limit takes (Rate, RateLimiter, Inflight): its shape, its secret,
 * its engine, and whether it is shared by worker_threads.
 */
export interface LimitSketchOptions {
  /** Counters per row of each sketch. Default 16384. Not together with `epsilon`. */
  width?: number;
  /** Rows of each sketch. Default 4. Not together with `delta`. */
  depth?: number;
  /** Relative error of each sketch: width = ceil(e / epsilon). */
  epsilon?: number;
  /** Failure probability: depth = ceil(ln(1 / delta)). */
  delta?: number;
  /** Hashing secret, at least 16 bytes. Default: 16 random bytes. */
  secret?: Uint8Array;
  /** 'wasm' or 'js' (see CountMinOptions.engine). */
  engine?: EngineName;
  /** State in shared memory, for worker_threads: send `handle`, `attach` it there. */
  shared?: boolean;
}

export const LIMIT_SKETCH_OPTION_NAMES: readonly string[] = [
  'width',
  'depth',
  'epsilon',
  'delta',
  'secret',
  'engine',
  'shared',
];

/** The same, for a limit whose state stays in one thread (it keeps exact state beside). */
export const UNSHARED_SKETCH_OPTION_NAMES: readonly string[] = LIMIT_SKETCH_OPTION_NAMES.filter(
  (name) => name !== 'shared',
);

/** The options of the sketches a limit counts into, with one secret for all of them. */
export function sketchOptions(
  options: LimitSketchOptions,
  conservative: boolean,
): CountMinOptions & { secret: Uint8Array } {
  const picked: CountMinOptions & { secret: Uint8Array } = {
    conservative,
    secret: options.secret ?? randomSecret(),
  };
  for (const name of ['width', 'depth', 'epsilon', 'delta', 'engine', 'shared'] as const) {
    if (options[name] !== undefined) Object.assign(picked, { [name]: options[name] });
  }
  return picked;
}

/** The options object itself: TypeError unless it is one. */
export function checkOptions<T>(options: T): T {
  if (options === null || typeof options !== 'object') {
    throw typeError('options', 'an object', options);
  }
  return options;
}

/** An amount of events, requests or cost: an integer from `min` to 2^31 - 1, fast when valid. */
export function checkCount(name: string, value: number, min: number): number {
  if (typeof value === 'number' && (value & SATURATED) === value && value >= min) return value;
  return integerIn(name, value, min, SATURATED);
}
