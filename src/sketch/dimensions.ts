/**
 * Sizing a sketch: width and depth, from the caller's options.
 *
 * Count-Min guarantee (Cormode & Muthukrishnan, "An improved data stream summary: the count-min
 * sketch and its applications", J. Algorithms 55(1), 2005, Theorem 1): with width w = ceil(e/eps)
 * and depth d = ceil(ln(1/delta)), an estimate exceeds the true count by more than eps * N with
 * probability at most delta, where N is the total of all updates. So the effective epsilon of a
 * sketch is e/w and its effective delta e^-d.
 */
import { integerIn, rangeError, typeError } from '../errors.js';

/** Default width: 2^14 cells per row, so eps = e/16384 ~ 1.7e-4 (see docs/sketch.md, "Sizing"). */
export const DEFAULT_WIDTH = 16384;
/** Default depth: 4 rows, so delta = e^-4 ~ 1.8%. */
export const DEFAULT_DEPTH = 4;
/** The most counters one sketch may have: 2^28 (1 GiB of 32-bit counters). */
export const MAX_COUNTERS = 2 ** 28;

export interface DimensionOptions {
  /** Counters per row. Default 16384. Not together with `epsilon`. */
  width?: number;
  /** Rows (independent hashes). Default 4. Not together with `delta`. */
  depth?: number;
  /** Relative error: width = ceil(e / epsilon). In (0, 1). */
  epsilon?: number;
  /** Failure probability: depth = ceil(ln(1 / delta)). In (0, 1). */
  delta?: number;
}

/** A sketch's dimensions and what they guarantee. */
export interface Dimensions {
  /** Counters per row. */
  width: number;
  /** Rows. */
  depth: number;
  /** e / width: an estimate exceeds the true count by more than epsilon * N ... */
  epsilon: number;
  /** ... with probability at most e^-depth. */
  delta: number;
}

/** The guarantee of a width x depth sketch (Cormode and Muthukrishnan 2005, Theorem 1). */
export function dimensionsOf(width: number, depth: number): Dimensions {
  return { width, depth, epsilon: Math.E / width, delta: Math.exp(-depth) };
}

function probability(name: string, value: unknown): number {
  if (typeof value !== 'number') throw typeError(name, 'a number', value);
  if (!(value > 0 && value < 1)) throw rangeError(name, 'a number in (0, 1)', value);
  return value;
}

export function resolveDimensions(options: DimensionOptions): { width: number; depth: number } {
  const { width, depth, epsilon, delta } = options;
  if (width !== undefined && epsilon !== undefined) {
    throw new RangeError('width and epsilon are two ways to set the same thing; pass only one');
  }
  if (depth !== undefined && delta !== undefined) {
    throw new RangeError('depth and delta are two ways to set the same thing; pass only one');
  }
  const w =
    epsilon !== undefined
      ? Math.ceil(Math.E / probability('epsilon', epsilon))
      : width === undefined
        ? DEFAULT_WIDTH
        : integerIn('width', width, 1, MAX_COUNTERS);
  const d =
    delta !== undefined
      ? Math.ceil(Math.log(1 / probability('delta', delta)))
      : depth === undefined
        ? DEFAULT_DEPTH
        : integerIn('depth', depth, 1, MAX_COUNTERS);
  if (w * d > MAX_COUNTERS) {
    // Name what the caller set, the way they set it: a width or depth too large, an epsilon or
    // delta too small (each gives its width or depth); defaults are not the caller's doing.
    const blamed = [
      epsilon !== undefined
        ? `epsilon ${epsilon} too small (width ${w})`
        : width !== undefined
          ? `width ${w} too large`
          : undefined,
      delta !== undefined
        ? `delta ${delta} too small (depth ${d})`
        : depth !== undefined
          ? `depth ${d} too large`
          : undefined,
    ].filter((part) => part !== undefined);
    const defaults = [
      epsilon === undefined && width === undefined ? `width ${w} (the default)` : undefined,
      delta === undefined && depth === undefined ? `depth ${d} (the default)` : undefined,
    ].filter((part) => part !== undefined);
    throw new RangeError(
      `${blamed.join(' and ')}: width x depth must be at most 2^28 counters (1 GiB); ` +
        `here ${w} x ${d} = ${w * d}${defaults.length > 0 ? `, with ${defaults.join(' and ')}` : ''}`,
    );
  }
  return { width: w, depth: d };
}
