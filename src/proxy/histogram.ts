/**
 * Durations as a Prometheus histogram, for scrapers: counts per bucket, a sum and a count, since
 * the start. The buckets are fixed (0.5 ms to 60 s, roughly x2.5 a step, Prometheus' default
 * spread moved down to a proxy's scale), so it takes 136 bytes whatever the traffic; a quantile
 * read off it is known only to its bucket, which is why the status page reads a quantile sketch.
 */

/** Upper bounds of the buckets, seconds; +Inf is implicit. */
export const BUCKETS_S = [
  0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60,
] as const;

/** A Prometheus histogram of durations over BUCKETS_S. The proxy records; read it. */
export class DurationHistogram {
  /**
   * Observations per bucket since the start, not cumulative: one bucket per upper bound
   * (BUCKETS_S: 0.5 ms to 60 s), then +Inf.
   */
  readonly counts = new Float64Array(BUCKETS_S.length + 1);
  /** Sum of the observations, seconds. */
  sum = 0;
  /** Observations since the start. */
  count = 0;

  /** @internal Records one duration of `seconds`. */
  observe(seconds: number): void {
    let bucket = 0;
    while (bucket < BUCKETS_S.length && seconds > BUCKETS_S[bucket]) bucket++;
    this.counts[bucket]++;
    this.sum += seconds;
    this.count++;
  }
}
