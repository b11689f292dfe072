/**
 * Latency quantiles (issue 34): what one observation costs with the quantile sketches the status
 * page reads, next to the Prometheus histogram the proxy keeps for scrapers, and how far each
 * one's quantiles are from the exact ones.
 *
 * Workload: 1M durations drawn once (seeded) from a log-normal of median 20 ms and sigma 1 (p99
 * about 205 ms), the shape request latencies have, and the same durations for every competitor.
 * The competitors, in rotation: DurationHistogram.observe (the histogram alone: a scan of 16
 * bounds, three adds), QuantileSketch.add (one log, one add), SlidingQuantiles.add (that plus the
 * clock read and the step check), and Latency.observe, what the proxy pays per request (both).
 * Accuracy: p50, p90 and p99 of the same durations from the sketch, and from the histogram read
 * as Prometheus' histogram_quantile does (linear inside the bucket), against the exact ones; and
 * the case of the issue, every request 1,250 ms.
 */
import { QuantileSketch, SlidingQuantiles } from '../src/index.js';
import { BUCKETS_S, DurationHistogram } from '../src/proxy/histogram.js';
import { LATENCY_ACCURACY, Latency } from '../src/proxy/latency.js';
import { ratioRow } from './limits.js';
import {
  type BenchOptions,
  type Competitor,
  consume,
  formatBytes,
  formatNs,
  median,
  nowNs,
  type Row,
  rotate,
} from './measure.js';
import { Prng } from './prng.js';
import { SEED } from './workload.js';

const DURATIONS = 1_000_000;
const QUANTILES = [0.5, 0.9, 0.99] as const;

/** `count` log-normal durations in ms (median 20, sigma 1), by Box-Muller over the seeded PRNG. */
function durations(count: number): Float64Array {
  const prng = new Prng(SEED ^ 0x34);
  const out = new Float64Array(count);
  for (let i = 0; i < count; i++) {
    const u = 1 - prng.nextFloat(); // (0, 1]: log(0) never
    const normal = Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * prng.nextFloat());
    out[i] = 20 * Math.exp(normal);
  }
  return out;
}

/** A competitor that feeds the durations to `observe`, `count` of them. */
function feeding(name: string, values: Float64Array, observe: (ms: number) => void): Competitor {
  return {
    name,
    run(count: number): number {
      const t = nowNs();
      for (let i = 0; i < count; i++) observe(values[i % values.length]);
      return nowNs() - t;
    },
  };
}

/** The `q` quantile of a histogram as Prometheus' histogram_quantile reads it, in ms. */
export function histogramQuantile(histogram: DurationHistogram, q: number): number {
  const rank = q * histogram.count;
  let below = 0;
  for (let b = 0; b < histogram.counts.length; b++) {
    const inside = histogram.counts[b];
    if (inside > 0 && below + inside >= rank) {
      if (b === BUCKETS_S.length) return BUCKETS_S[b - 1] * 1000;
      const low = b === 0 ? 0 : BUCKETS_S[b - 1];
      return (low + ((BUCKETS_S[b] - low) * (rank - below)) / inside) * 1000;
    }
    below += inside;
  }
  return BUCKETS_S[BUCKETS_S.length - 1] * 1000;
}

/** "p50 20.0 ms (exact 20.0, +0.12%)" for each quantile, and the largest error of them. */
function accuracy(
  sorted: Float64Array,
  read: (q: number) => number,
): { text: string; worst: number } {
  let worst = 0;
  const parts = QUANTILES.map((q) => {
    const exact = sorted[Math.floor(q * (sorted.length - 1))];
    const got = read(q);
    const error = (got - exact) / exact;
    worst = Math.max(worst, Math.abs(error));
    const sign = error >= 0 ? '+' : '';
    return `p${q * 100} ${got.toFixed(1)} ms (exact ${exact.toFixed(1)}, ${sign}${(error * 100).toFixed(2)}%)`;
  });
  return { text: parts.join('; '), worst };
}

function accuracyRows(values: Float64Array, what: string, number: string): Row[] {
  const sketch = new QuantileSketch({
    relativeAccuracy: LATENCY_ACCURACY,
    minValue: 0.01,
    maxValue: 3.6e6,
  });
  const histogram = new DurationHistogram();
  for (const ms of values) {
    sketch.add(ms);
    histogram.observe(ms / 1000);
  }
  const sorted = Float64Array.from(values).sort();
  const ours = accuracy(sorted, (q) => sketch.quantile(q) as number);
  const theirs = accuracy(sorted, (q) => histogramQuantile(histogram, q));
  return [
    {
      case: `${number} accuracy, ${what}: QuantileSketch (1%)`,
      measured: ours.text,
      target: `every quantile within ${LATENCY_ACCURACY * 100}%`,
      met: ours.worst <= LATENCY_ACCURACY,
    },
    {
      case: `${number} accuracy, ${what}: histogram, as histogram_quantile reads it`,
      measured: theirs.text,
      target: 'report only',
      met: null,
    },
  ];
}

export async function quantilesSuite(options: BenchOptions): Promise<Row[]> {
  const values = durations(DURATIONS);
  const histogram = new DurationHistogram();
  const sketch = new QuantileSketch({
    relativeAccuracy: LATENCY_ACCURACY,
    minValue: 0.01,
    maxValue: 3.6e6,
  });
  const sliding = new SlidingQuantiles({
    relativeAccuracy: LATENCY_ACCURACY,
    minValue: 0.01,
    maxValue: 3.6e6,
  });
  const latency = new Latency();
  options.log(`  quantiles: ${DURATIONS} log-normal durations, ${options.runs} rounds`);
  const rounds = rotate(
    [
      feeding('histogram', values, (ms) => histogram.observe(ms / 1000)),
      feeding('QuantileSketch.add', values, (ms) => sketch.add(ms)),
      feeding('SlidingQuantiles.add', values, (ms) => sliding.add(ms)),
      feeding('Latency.observe', values, (ms) => latency.observe(ms)),
    ],
    {
      operations: DURATIONS,
      warmupOperations: DURATIONS / 10,
      runs: options.runs,
      log: options.log,
    },
  );
  consume(histogram.count + sketch.count + latency.count);

  // A read: what /status does per latency (a snapshot of the ring, then three quantiles).
  const reads: number[] = [];
  for (let run = 0; run < options.runs; run++) {
    const t = nowNs();
    for (let i = 0; i < 100; i++) consume(latency.lastMinute().p99 ?? 0);
    reads.push((nowNs() - t) / 100);
  }

  const constant = new Float64Array(1000).fill(1250);
  return [
    ratioRow(
      rounds,
      '34.1 QuantileSketch.add against the histogram, per observation',
      'QuantileSketch.add',
      'histogram',
      null,
    ),
    ratioRow(
      rounds,
      '34.2 SlidingQuantiles.add (a minute in 5 s steps) against the histogram',
      'SlidingQuantiles.add',
      'histogram',
      null,
    ),
    ratioRow(
      rounds,
      "34.3 Latency.observe (the proxy's, both) against the histogram alone",
      'Latency.observe',
      'histogram',
      null,
    ),
    {
      case: '34.4 a read of the last minute (snapshot of 13 sketches, p50/p90/p99/max)',
      measured: `${formatNs(median(reads))}/read (runs ${formatNs(Math.min(...reads))}-${formatNs(Math.max(...reads))})`,
      target: 'report only',
      met: null,
    },
    {
      case: '34.5 memory per latency',
      measured:
        `histogram ${formatBytes(histogram.counts.byteLength)}; QuantileSketch ${formatBytes(sketch.memoryBytes)}; ` +
        `SlidingQuantiles ${formatBytes(sliding.memoryBytes)}; Latency ${formatBytes(latency.memoryBytes)}; ` +
        'whatever the number of durations',
      target: 'report only',
      met: null,
    },
    ...accuracyRows(values, 'log-normal (median 20 ms, sigma 1)', '34.6'),
    ...accuracyRows(constant, 'every request 1,250 ms (the issue)', '34.7'),
  ];
}
