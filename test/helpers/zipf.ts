/** Deterministic Zipf streams for tests, from the sampler the demo uses. */
import { xorshift32, ZipfSampler } from '../../src/cli/zipf.js';

/** Samples ranks 0..n-1 with P(rank r) proportional to 1 / (r + 1)^s. */
export function zipf(n: number, s: number, seed: number): () => number {
  const sampler = new ZipfSampler(n, s);
  const random = xorshift32(seed);
  return () => sampler.sample(random());
}
