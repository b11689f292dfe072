/**
 * The benchmark workload, generated before any timing from a fixed seed.
 *
 * Keys are pregenerated (1M distinct integers in an Int32Array, 1M distinct ~36-character
 * strings shaped like `customer-000123/api/v1/orders/0042ab`), and the event stream is an
 * Int32Array of indices into them, so a timed loop only reads arrays. The seed workload is
 * UNIFORM over the keys: every event picks a key uniformly at random (the worst case for a hash
 * map's cache, the plain case for a sketch). The accuracy suite uses a Zipf stream instead.
 */
import { ZipfSampler as Sampler } from '../src/cli/zipf.js';
import type { Prng } from './prng.js';

/** Seed of every generated workload; change it to see another (equally valid) sample. */
export const SEED = 0x5eed;
/** Distinct keys in the seed workload. */
export const KEY_COUNT = 1_000_000;

/**
 * `count` distinct integers in [0, 2^30): V8 small integers, so the Map competitor gets its
 * fastest key representation.
 */
export function intKeys(count: number, prng: Prng): Int32Array {
  const keys = new Int32Array(count);
  const seen = new Set<number>();
  let n = 0;
  while (n < count) {
    const key = prng.nextU32() >>> 2;
    if (seen.has(key)) continue;
    seen.add(key);
    keys[n++] = key;
  }
  return keys;
}

/**
 * A copy of `strings` in which every string is flat (sequential). Template literals build cons
 * strings, which hashing would flatten on first use; strings read from a request are flat, so
 * the timed loops get flat ones. JSON.parse allocates each string afresh.
 */
function flatten(strings: string[]): string[] {
  return JSON.parse(JSON.stringify(strings)) as string[];
}

/** `count` distinct keys like `customer-000123/api/v1/orders/0042ab` (36 characters). */
export function stringKeys(count: number, prng: Prng): string[] {
  const keys: string[] = [];
  const seen = new Set<string>();
  while (keys.length < count) {
    const customer = String(prng.below(1_000_000)).padStart(6, '0');
    const order = (prng.nextU32() >>> 8).toString(16).padStart(6, '0');
    const key = `customer-${customer}/api/v1/orders/${order}`;
    if (seen.has(key)) continue;
    seen.add(key);
    keys.push(key);
  }
  return flatten(keys);
}

/** `count` distinct random strings of exactly `length` characters (a-z, 0-9). */
export function randomStrings(count: number, length: number, prng: Prng): string[] {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789';
  const strings: string[] = [];
  const seen = new Set<string>();
  while (strings.length < count) {
    let s = '';
    for (let i = 0; i < length; i++) s += alphabet[prng.below(alphabet.length)];
    if (seen.has(s)) continue;
    seen.add(s);
    strings.push(s);
  }
  return flatten(strings);
}

/** `count` events, each a key index drawn uniformly from [0, keyCount). */
export function uniformEvents(count: number, keyCount: number, prng: Prng): Int32Array {
  const events = new Int32Array(count);
  for (let i = 0; i < count; i++) events[i] = prng.below(keyCount);
  return events;
}

/** Zipf(exponent) over ranks 0 .. keyCount - 1, drawing from a seeded Prng. */
export class ZipfSampler {
  private readonly sampler: Sampler;

  constructor(keyCount: number, exponent: number) {
    this.sampler = new Sampler(keyCount, exponent);
  }

  /** A rank; 0 is the most frequent. */
  sample(prng: Prng): number {
    return this.sampler.sample(prng.nextFloat());
  }

  /** `count` sampled ranks. */
  events(count: number, prng: Prng): Int32Array {
    const events = new Int32Array(count);
    for (let i = 0; i < count; i++) events[i] = this.sample(prng);
    return events;
  }
}

/**
 * `count` distinct client addresses like `10.3.141.59` (IPv4-like, up to 2^24 of them), in a
 * seeded random order: the key a rate limiter sees per client.
 */
export function ipKeys(count: number, prng: Prng): string[] {
  if (count > 2 ** 24) throw new RangeError(`at most 2^24 addresses under 10/8; asked ${count}`);
  const order = new Int32Array(count);
  for (let i = 0; i < count; i++) order[i] = i;
  for (let i = count - 1; i > 0; i--) {
    const j = prng.below(i + 1);
    [order[i], order[j]] = [order[j], order[i]];
  }
  const keys: string[] = [];
  for (const n of order) keys.push(`10.${n >>> 16}.${(n >>> 8) & 255}.${n & 255}`);
  return flatten(keys);
}
