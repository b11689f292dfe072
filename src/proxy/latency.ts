/**
 * Request durations as a Prometheus histogram (cumulative counts per upper bound, a sum and a
 * count, since the start), and the quantiles of the last minute for the status page.
 *
 * Fixed memory, as everything here: the buckets are fixed (0.5 ms to 60 s, roughly x2.5 a
 * step, Prometheus' default spread moved down to a proxy's scale), and the last minute is a
 * ring of per-second bucket counts. A quantile is read off the buckets by linear interpolation
 * inside the bucket it falls in, as Prometheus' `histogram_quantile` does: it is exact to the
 * bucket, no finer.
 */

import { SecondRing } from './seconds.js';

/** Upper bounds of the buckets, seconds; +Inf is implicit. */
export const BUCKETS_S = [
  0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60,
] as const;

const SLOTS = BUCKETS_S.length + 1;
const RING_S = 60;

/**
 * One duration's histogram (`counts`, `sum`, `count`, since the start) and its quantiles over
 * the last minute. The proxy records into it; read it, do not write it.
 */
export class Latency {
  /**
   * Observations per bucket since the start, not cumulative: one bucket per upper bound
   * (BUCKETS_S: 0.5 ms to 60 s), then +Inf.
   */
  readonly counts = new Float64Array(SLOTS);
  /** Sum of the observations, seconds. */
  sum = 0;
  /** Observations since the start. */
  count = 0;
  private readonly ring: SecondRing;

  /** @internal Made by the proxy's Traffic; `now` is the clock, in epoch milliseconds. */
  constructor(now: () => number = Date.now) {
    this.ring = new SecondRing(RING_S, SLOTS, now);
  }

  /** @internal Records one duration of `ms` milliseconds. */
  observe(ms: number): void {
    const s = ms / 1000;
    let bucket = 0;
    while (bucket < BUCKETS_S.length && s > BUCKETS_S[bucket]) bucket++;
    this.counts[bucket]++;
    this.sum += s;
    this.count++;
    this.ring.cells[this.ring.row() + bucket]++;
  }

  /**
   * The `q` quantile (0 < q < 1) of the last minute, in milliseconds; null with no observation.
   * Past the last bound it is the last bound (the histogram knows no more).
   */
  quantileMs(q: number): number | null {
    this.ring.row(); // clears the seconds gone by
    // The last 60 whole seconds and the one under way.
    const cells = this.ring.cells;
    const window = new Float64Array(SLOTS);
    for (let at = 0; at < cells.length; at += SLOTS) {
      for (let b = 0; b < SLOTS; b++) window[b] += cells[at + b];
    }
    let total = 0;
    for (let b = 0; b < SLOTS; b++) total += window[b];
    if (total === 0) return null;
    const rank = q * total;
    let below = 0;
    for (let b = 0; b < SLOTS; b++) {
      if (below + window[b] >= rank && window[b] > 0) {
        if (b === BUCKETS_S.length) return BUCKETS_S[b - 1] * 1000;
        const low = b === 0 ? 0 : BUCKETS_S[b - 1];
        const high = BUCKETS_S[b];
        return (low + ((high - low) * (rank - below)) / window[b]) * 1000;
      }
      below += window[b];
    }
    return BUCKETS_S[BUCKETS_S.length - 1] * 1000;
  }
}
