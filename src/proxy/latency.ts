/**
 * Request durations, two ways. For scrapers, a Prometheus histogram since the start (histogram.ts).
 * For the status page and /status, the quantiles of the last minute from a SlidingQuantiles: each
 * within 1% of the true quantile of the durations it covers (60 to 65 s of them), where the
 * histogram's bucket edges would overstate one by up to its bucket's width (2.5x here).
 *
 * Fixed memory, as everything here: 136 bytes of histogram and 100 KiB of quantile sketches
 * (1% from 10 us to an hour, 13 steps of 5 s), whatever the traffic.
 */
import { type QuantileSketch, SlidingQuantiles } from '../core.js';
import { DurationHistogram } from './histogram.js';

/** The relative error of every latency quantile the proxy reports. */
export const LATENCY_ACCURACY = 0.01;

/**
 * The quantiles of the last minute, milliseconds, each within LATENCY_ACCURACY of the true one;
 * every field null when no duration ended in it.
 */
export interface LatencySummary {
  /** Median, milliseconds. */
  p50: number | null;
  /** 90th percentile, milliseconds. */
  p90: number | null;
  /** 99th percentile, milliseconds. */
  p99: number | null;
  /** The longest, milliseconds (exact). */
  max: number | null;
}

/**
 * One duration's Prometheus histogram since the start and its quantiles over the last minute. The proxy records into it; read it, do not write it.
 */
export class Latency {
  /** The Prometheus histogram, since the start. */
  readonly histogram = new DurationHistogram();
  private readonly recent: SlidingQuantiles;

  /** @internal Made by the proxy's Traffic; `now` is the clock, in epoch milliseconds. */
  constructor(now: () => number = Date.now) {
    this.recent = new SlidingQuantiles({
      relativeAccuracy: LATENCY_ACCURACY,
      minValue: 0.01,
      maxValue: 3_600_000,
      now,
    });
  }

  /** Bytes of the histogram and the quantile sketches: fixed. */
  get memoryBytes(): number {
    return this.histogram.counts.byteLength + this.recent.memoryBytes;
  }

  /** Observations since the start. */
  get count(): number {
    return this.histogram.count;
  }

  /** @internal Records one duration of `ms` milliseconds. */
  observe(ms: number): void {
    this.histogram.observe(ms / 1000);
    this.recent.add(ms);
  }

  /** p50, p90, p99 and max of the last minute (see the top comment). */
  lastMinute(): LatencySummary {
    return summary(this.recent.snapshot());
  }

  /**
   * The `q` quantile (0 <= q <= 1) of the last minute, in milliseconds, within 1%; null with no
   * observation. RangeError for q outside [0, 1].
   */
  quantileMs(q: number): number | null {
    return this.recent.snapshot().quantile(q) ?? null;
  }
}

function summary(sketch: QuantileSketch): LatencySummary {
  return {
    p50: sketch.quantile(0.5) ?? null,
    p90: sketch.quantile(0.9) ?? null,
    p99: sketch.quantile(0.99) ?? null,
    max: sketch.max ?? null,
  };
}
