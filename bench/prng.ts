/**
 * A small deterministic PRNG, so that every benchmark run sees the same keys and events.
 *
 * xoshiro128** (Blackman & Vigna, "Scrambled linear pseudorandom number generators", ACM TOMS
 * 2021): 128 bits of state, 32-bit output, all in int32 arithmetic. Its state is seeded from one
 * 32-bit seed with splitmix32 (a Weyl sequence through MurmurHash3's finalizer), as the authors
 * recommend, so that nearby seeds give unrelated streams. Not for secrets.
 */

const TWO_POW_32 = 4294967296;

function rotl(x: number, k: number): number {
  return (x << k) | (x >>> (32 - k));
}

export class Prng {
  private s0: number;
  private s1: number;
  private s2: number;
  private s3: number;

  constructor(seed: number) {
    let z = seed | 0;
    const words = [0, 0, 0, 0];
    for (let i = 0; i < 4; i++) {
      z = (z + 0x9e3779b9) | 0;
      let x = z;
      x = Math.imul(x ^ (x >>> 16), 0x85ebca6b);
      x = Math.imul(x ^ (x >>> 13), 0xc2b2ae35);
      words[i] = x ^ (x >>> 16);
    }
    [this.s0, this.s1, this.s2, this.s3] = words;
  }

  /** Uniform in [0, 2^32). */
  nextU32(): number {
    const result = Math.imul(rotl(Math.imul(this.s1, 5), 7), 9) >>> 0;
    const t = this.s1 << 9;
    this.s2 ^= this.s0;
    this.s3 ^= this.s1;
    this.s1 ^= this.s2;
    this.s0 ^= this.s3;
    this.s2 ^= t;
    this.s3 = rotl(this.s3, 11);
    return result;
  }

  /** Uniform integer in [0, n), n <= 2^21, by multiply-shift (bias below 2^-11, negligible here). */
  below(n: number): number {
    return Math.floor((this.nextU32() * n) / TWO_POW_32);
  }

  /** Uniform in [0, 1), 32 bits of resolution. */
  nextFloat(): number {
    return this.nextU32() / TWO_POW_32;
  }

  /** `count` pseudo-random bytes (for reproducible secrets). */
  bytes(count: number): Uint8Array {
    const out = new Uint8Array(count);
    for (let i = 0; i < count; i++) out[i] = this.nextU32() >>> 24;
    return out;
  }
}
