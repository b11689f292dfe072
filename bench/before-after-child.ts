/**
 * One side of the before-after suite: the cases of one build (the `build/src/index.js` under
 * the folder given), each warmed up and then timed once, printed as JSON (case -> ns per call).
 * A process per side and round, so that each side's loops see one class each (no call site
 * shared by two builds' classes) and neither side's garbage lands on the other's clock.
 */
import { collectGarbage, nowNs } from './measure.js';
import { Prng } from './prng.js';
import { intKeys, ipKeys, KEY_COUNT, SEED, stringKeys, uniformEvents } from './workload.js';

/** Every case's calls per timed run (and per warm-up run, a fifth of it). */
const CALLS = { check: 1_000_000, increment: 10_000_000, strings: 1_000_000 };

interface Sketch {
  increment(key: number | string): number;
}
interface Limiter {
  check(key: string): { remaining: number };
}
interface Build {
  CountMinSketch: new () => Sketch;
  RateLimiter: new (options: object) => Limiter;
}

export type SideSample = Record<string, number>;

function time(calls: number, loop: (count: number) => number): number {
  for (let i = 0; i < 3; i++) loop(calls / 5);
  collectGarbage();
  const start = nowNs();
  const sum = loop(calls);
  const ns = nowNs() - start;
  if (sum === 0.5) process.stderr.write('unreachable\n'); // keeps the sum alive
  return ns / calls;
}

async function main(root: string): Promise<void> {
  const build = (await import(`${root}/build/src/index.js`)) as Build;
  const addresses = ipKeys(KEY_COUNT, new Prng(SEED));
  const limitEvents = uniformEvents(CALLS.check, KEY_COUNT, new Prng(SEED + 20));
  const ints = intKeys(KEY_COUNT, new Prng(SEED));
  const intEvents = uniformEvents(CALLS.increment, KEY_COUNT, new Prng(SEED + 1));
  const strings = stringKeys(KEY_COUNT, new Prng(SEED + 2));
  const stringEvents = uniformEvents(CALLS.strings, KEY_COUNT, new Prng(SEED + 3));
  const sliding = new build.RateLimiter({ limit: 1_000_000, windowMs: 60_000 });
  const gcra = new build.RateLimiter({ limit: 1_000_000, windowMs: 60_000, algorithm: 'gcra' });
  const sketch = new build.CountMinSketch();
  const stringSketch = new build.CountMinSketch();
  const sample: SideSample = {
    'RateLimiter.check, sliding window': time(CALLS.check, (count) => {
      let sum = 0;
      for (let i = 0; i < count; i++) sum += sliding.check(addresses[limitEvents[i]]).remaining;
      return sum;
    }),
    'RateLimiter.check, gcra': time(CALLS.check, (count) => {
      let sum = 0;
      for (let i = 0; i < count; i++) sum += gcra.check(addresses[limitEvents[i]]).remaining;
      return sum;
    }),
    'CountMinSketch.increment, integer keys': time(CALLS.increment, (count) => {
      let sum = 0;
      for (let i = 0; i < count; i++) sum = (sum + sketch.increment(ints[intEvents[i]])) | 0;
      return sum;
    }),
    'CountMinSketch.increment, 36-char string keys': time(CALLS.strings, (count) => {
      let sum = 0;
      for (let i = 0; i < count; i++) {
        sum = (sum + stringSketch.increment(strings[stringEvents[i]])) | 0;
      }
      return sum;
    }),
  };
  process.stdout.write(`${JSON.stringify(sample)}\n`);
}

if (process.argv[2] !== undefined) await main(process.argv[2]);
