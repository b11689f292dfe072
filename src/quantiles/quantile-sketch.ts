/**
 * Quantiles in fixed memory with a stated relative error: DDSketch (Masson, Rim and Lee,
 * "DDSketch: A Fast and Fully-Mergeable Quantile Sketch with Relative-Error Guarantees", VLDB
 * 2019), the log-bucketed form with a fixed range.
 *
 * Layout. With gamma = (1 + alpha) / (1 - alpha), a value x > 0 falls in bucket
 * i = ceil(log_gamma(x)), which holds (gamma^(i-1), gamma^i]; the bucket reads as
 * 2 gamma^i / (gamma + 1), within alpha of every value in it (section 2.1). The buckets of
 * [minValue, maxValue] are one Float64Array of counts (exact up to 2^53), plus one bucket for
 * values below minValue (read as 0) and one above maxValue (read as the largest value seen):
 * memory is fixed by the range and alpha, about ln(max / min) / (2 alpha) buckets (1,154 for
 * the defaults, alpha 1% over 0.001 to 1e7, milliseconds say: 9.0 KiB), whatever the number of
 * values.
 *
 * Guarantee. For values within [minValue, maxValue], `quantile(q)` is within a relative error
 * alpha of the value of rank floor(q (n - 1)) (0-based) of the values added, sorted (the paper's
 * lower quantile, its Proposition 3). The answer is also kept within the least and the largest
 * value seen, which only brings it closer. Merging two sketches of the same parameters adds
 * their counts: the result is the sketch of both sets of values (section 2.2).
 */
import { checkOptionNames, rangeError, typeError } from '../errors.js';

/** Options of `new QuantileSketch`. */
export interface QuantileSketchOptions {
  /** alpha: every quantile within this relative error. In (0, 1); default 0.01. */
  relativeAccuracy?: number;
  /** The least value tracked with the guarantee; below it a value reads as 0. Default 0.001. */
  minValue?: number;
  /** The largest value tracked with the guarantee; above it, as the largest seen. Default 1e7. */
  maxValue?: number;
}

/** The most buckets a sketch may ask for: 8 MiB of counts. */
const MAX_BUCKETS = 1 << 20;

/**
 * Quantiles of the values added, each within `relativeAccuracy` of the exact one for values in
 * [minValue, maxValue], in memory fixed by those three (see the top comment for the guarantee).
 * TypeError or RangeError naming the option for bad options.
 */
export class QuantileSketch {
  /** alpha, the relative error of every quantile in range. */
  readonly relativeAccuracy: number;
  /** The least value tracked with the guarantee; below it a value reads as 0. */
  readonly minValue: number;
  /** The largest value tracked with the guarantee; above it, as the largest seen. */
  readonly maxValue: number;
  private readonly lnGamma: number;
  private readonly gamma: number;
  /** The bucket index of minValue; counts[0] is below it, counts[last] above maxValue. */
  private readonly offset: number;
  private readonly counts: Float64Array;
  private total = 0;
  private least = Number.POSITIVE_INFINITY;
  private largest = Number.NEGATIVE_INFINITY;

  constructor(options: QuantileSketchOptions = {}) {
    if (options === null || typeof options !== 'object') {
      throw typeError('options', 'an object', options);
    }
    checkOptionNames('options', options, ['relativeAccuracy', 'minValue', 'maxValue']);
    const { relativeAccuracy = 0.01, minValue = 0.001, maxValue = 1e7 } = options;
    checkNumber('relativeAccuracy', relativeAccuracy);
    if (!(relativeAccuracy > 0 && relativeAccuracy < 1)) {
      throw rangeError('relativeAccuracy', 'a number in (0, 1)', relativeAccuracy);
    }
    checkNumber('minValue', minValue);
    if (!(minValue > 0 && Number.isFinite(minValue))) {
      throw rangeError('minValue', 'a finite number > 0', minValue);
    }
    checkNumber('maxValue', maxValue);
    if (!(maxValue > minValue && Number.isFinite(maxValue))) {
      throw rangeError('maxValue', `a finite number > minValue (${minValue})`, maxValue);
    }
    this.relativeAccuracy = relativeAccuracy;
    this.minValue = minValue;
    this.maxValue = maxValue;
    this.gamma = (1 + relativeAccuracy) / (1 - relativeAccuracy);
    this.lnGamma = Math.log(this.gamma);
    this.offset = this.indexOf(minValue);
    const buckets = this.indexOf(maxValue) - this.offset + 3;
    if (!(buckets <= MAX_BUCKETS)) {
      throw rangeError(
        'relativeAccuracy',
        `an accuracy and range that need at most ${MAX_BUCKETS} buckets (these need ${buckets})`,
        relativeAccuracy,
      );
    }
    this.counts = new Float64Array(buckets);
  }

  /** Values added. */
  get count(): number {
    return this.total;
  }

  /** The largest value added, exactly; undefined when empty. */
  get max(): number | undefined {
    return this.total === 0 ? undefined : this.largest;
  }

  /** Bytes of the counts. */
  get memoryBytes(): number {
    return this.counts.byteLength;
  }

  /** Adds `value` (a number >= 0). TypeError for a non-number, RangeError for NaN, < 0, Infinity. */
  add(value: number): void {
    checkNumber('value', value);
    if (!(value >= 0 && value < Number.POSITIVE_INFINITY)) {
      throw rangeError('value', 'a finite number >= 0', value);
    }
    this.counts[this.bucketOf(value)]++;
    this.total++;
    if (value < this.least) this.least = value;
    if (value > this.largest) this.largest = value;
  }

  /**
   * The value of rank floor(q (n - 1)) among those added, within the relative accuracy (see the
   * top comment); undefined when empty. RangeError for q outside [0, 1].
   */
  quantile(q: number): number | undefined {
    checkNumber('q', q);
    if (!(q >= 0 && q <= 1)) throw rangeError('q', 'a number in [0, 1]', q);
    if (this.total === 0) return undefined;
    const rank = Math.floor(q * (this.total - 1));
    const counts = this.counts;
    const last = counts.length - 1;
    let seen = 0;
    let bucket = 0;
    for (; bucket < last; bucket++) {
      seen += counts[bucket];
      if (seen > rank) break;
    }
    let value: number;
    if (bucket === 0) value = 0;
    else if (bucket === last) value = this.largest;
    else value = (2 * this.gamma ** (bucket - 1 + this.offset)) / (this.gamma + 1);
    return Math.min(Math.max(value, this.least), this.largest);
  }

  /** Adds `other`'s values: RangeError unless its accuracy and range are this one's. */
  merge(other: QuantileSketch): void {
    if (!(other instanceof QuantileSketch)) {
      throw typeError('other', 'a QuantileSketch', other);
    }
    if (
      other.relativeAccuracy !== this.relativeAccuracy ||
      other.minValue !== this.minValue ||
      other.maxValue !== this.maxValue
    ) {
      throw rangeError(
        'other',
        'a sketch of the same relativeAccuracy, minValue and maxValue',
        other,
      );
    }
    for (let i = 0; i < this.counts.length; i++) this.counts[i] += other.counts[i];
    this.total += other.total;
    this.least = Math.min(this.least, other.least);
    this.largest = Math.max(this.largest, other.largest);
  }

  /** Forgets every value. */
  clear(): void {
    this.counts.fill(0);
    this.total = 0;
    this.least = Number.POSITIVE_INFINITY;
    this.largest = Number.NEGATIVE_INFINITY;
  }

  private indexOf(value: number): number {
    return Math.ceil(Math.log(value) / this.lnGamma);
  }

  /** counts' slot for `value`: 0 below minValue, the last above maxValue. */
  private bucketOf(value: number): number {
    if (value < this.minValue) return 0;
    if (value > this.maxValue) return this.counts.length - 1;
    // Within the range, log rounding may put a value one bucket off at an edge; clamped so that
    // minValue and maxValue stay in range.
    const index = this.indexOf(value) - this.offset + 1;
    return Math.min(Math.max(index, 1), this.counts.length - 2);
  }
}

function checkNumber(name: string, value: unknown): void {
  if (typeof value !== 'number') throw typeError(name, 'a number', value);
}
