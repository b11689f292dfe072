/**
 * Seeded skewed streams: the demo's data (and the tests' and benchmarks').
 *
 * Zipf(s) over ranks 0..n-1, P(rank r) proportional to 1 / (r + 1)^s, sampled by inverting the
 * cumulative distribution (a binary search in a precomputed table of n doubles).
 */

export class ZipfSampler {
  private readonly cdf: Float64Array;

  constructor(keyCount: number, exponent: number) {
    const cdf = new Float64Array(keyCount);
    let sum = 0;
    for (let r = 0; r < keyCount; r++) {
      sum += 1 / (r + 1) ** exponent;
      cdf[r] = sum;
    }
    for (let r = 0; r < keyCount; r++) cdf[r] /= sum;
    cdf[keyCount - 1] = 1;
    this.cdf = cdf;
  }

  /** The rank at uniform `u` in [0, 1); rank 0 is the most frequent. */
  sample(u: number): number {
    const cdf = this.cdf;
    let lo = 0;
    let hi = cdf.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (cdf[mid] > u) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }
}

/** xorshift32 (Marsaglia 2003): a tiny seeded source of uniform numbers in [0, 1). */
export function xorshift32(seed: number): () => number {
  let state = seed | 0 || 1;
  return () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 4294967296;
  };
}
