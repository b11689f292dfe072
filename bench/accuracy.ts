/**
 * Conservative vs plain update (case 8): the mean overestimate on a skewed stream.
 *
 * A trial draws 1M events from Zipf(1.0) over 100k keys (the first 100k integer keys of the
 * seed workload, most frequent first), feeds them to a plain and a conservative 2048 x 4 sketch
 * that share one secret, and averages (estimate - true count) over every key that occurred.
 * Each trial has its own stream and its own secret, both from the seeded PRNG, so the run is
 * reproducible; the figures are medians over the trials, the ratio taken within each trial.
 */
import { CountMinSketch } from '../src/index.js';
import {
  type BenchOptions,
  consume,
  formatCount,
  formatRange,
  formatRatio,
  median,
  type Row,
} from './measure.js';
import { Prng } from './prng.js';
import { intKeys, SEED, ZipfSampler } from './workload.js';

const KEYS = 100_000;
const EVENTS = 1_000_000;
const EXPONENT = 1.0;
const WIDTH = 2048;
const DEPTH = 4;
/** Conservative update must cut the mean overestimate at least this many times. */
const TARGET = 1.5;

interface Trial {
  plain: number;
  conservative: number;
}

function meanOverestimate(
  sketch: CountMinSketch,
  keys: Int32Array,
  counts: Int32Array,
): { mean: number; checksum: number } {
  let sum = 0;
  let distinct = 0;
  let checksum = 0;
  for (let rank = 0; rank < counts.length; rank++) {
    if (counts[rank] === 0) continue;
    const estimate = sketch.estimate(keys[rank]);
    if (estimate < counts[rank]) throw new Error(`underestimate for rank ${rank}: a bug`);
    sum += estimate - counts[rank];
    distinct++;
    checksum = (checksum + estimate) | 0;
  }
  return { mean: sum / distinct, checksum };
}

function trial(keys: Int32Array, zipf: ZipfSampler, prng: Prng): Trial {
  const secret = prng.bytes(16);
  const plain = new CountMinSketch({ width: WIDTH, depth: DEPTH, secret });
  const conservative = new CountMinSketch({
    width: WIDTH,
    depth: DEPTH,
    secret,
    conservative: true,
  });
  const counts = new Int32Array(KEYS);
  for (let i = 0; i < EVENTS; i++) {
    const rank = zipf.sample(prng);
    counts[rank]++;
    const key = keys[rank];
    plain.increment(key);
    conservative.increment(key);
  }
  const p = meanOverestimate(plain, keys, counts);
  const c = meanOverestimate(conservative, keys, counts);
  consume(p.checksum + c.checksum);
  return { plain: p.mean, conservative: c.mean };
}

export async function accuracySuite(options: BenchOptions): Promise<Row[]> {
  const { runs, log } = options;
  log(
    `  case 8: conservative vs plain, Zipf(${EXPONENT}) ${formatCount(EVENTS)} events over ` +
      `${formatCount(KEYS)} keys, ${WIDTH}x${DEPTH}`,
  );
  const keys = intKeys(KEYS, new Prng(SEED));
  const zipf = new ZipfSampler(KEYS, EXPONENT);
  const trials: Trial[] = [];
  for (let t = 0; t < runs; t++) {
    const result = trial(keys, zipf, new Prng(SEED + 100 + t));
    trials.push(result);
    log(
      `    trial ${t + 1}/${runs}: plain ${result.plain.toFixed(1)}, conservative ` +
        `${result.conservative.toFixed(1)}`,
    );
  }
  const ratios = trials.map((t) => t.plain / t.conservative);
  const ratio = median(ratios);
  return [
    {
      case:
        `8. mean overestimate, Zipf(${EXPONENT}), ${formatCount(EVENTS)} events over ` +
        `${formatCount(KEYS)} keys, ${WIDTH}x${DEPTH}: plain vs conservative`,
      measured:
        `conservative ${formatRatio(ratio)} lower (runs ${formatRange(ratios, formatRatio)}; plain ` +
        `${median(trials.map((t) => t.plain)).toFixed(1)}, conservative ` +
        `${median(trials.map((t) => t.conservative)).toFixed(1)} per distinct key)`,
      target: `>= ${TARGET}x lower`,
      met: ratio >= TARGET,
    },
  ];
}
