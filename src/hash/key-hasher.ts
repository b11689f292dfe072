/**
 * Keyed hashing of keys to 64 bits (two 32-bit words, `h1` and `h2`).
 *
 * Why HalfSipHash-1-3. A Count-Min sketch answers "how many?" for a key by reading the cells its
 * hash selects. If an attacker can predict those cells, they can flood the cells of an innocent
 * key with their own keys and make it look hot (or, with decrements, hide a hot one). A seeded
 * non-cryptographic hash (xxHash, Murmur, FNV) does not stop this: seed-independent collisions
 * are known for all of them. A keyed PRF does: without the secret, the cells of a key are
 * unpredictable. SipHash (Aumasson & Bernstein, "SipHash: a fast short-input PRF", 2012) is the
 * standard answer for hash tables; its 32-bit sibling HalfSipHash works on 32-bit words, which
 * is what JavaScript's integer arithmetic (`| 0`, `Math.imul`, shifts) does natively. SipHash's
 * 64-bit words cost carries and paired shifts in JS: measured here, 65 ns per integer key for
 * SipHash-1-3 against 18 ns for HalfSipHash-1-3. The Linux kernel makes the same choice for its
 * hash tables (HalfSipHash-1-3 where 64-bit arithmetic is slow). We use 1 compression round and
 * 3 finalization rounds, with 64-bit output; the key is 64 bits derived from the secret.
 *
 * Keys are type-tagged: the tag is folded into the initial state, so the number 1, the bigint 1n,
 * the string "1" and the bytes [0x31] are four different keys. Byte keys use tag 0, which makes
 * them plain HalfSipHash-1-3 (tested against the reference implementation's outputs).
 * - numbers: the 8 bytes of the IEEE-754 double, after -0 -> 0; NaN and +-Infinity are refused.
 * - strings: their UTF-16 code units, two per word, read with charCodeAt: no encoding, no
 *   allocation per call. (So a string and its UTF-8 bytes are different keys; that is the tag's
 *   job anyway.)
 * - bigints: their hexadecimal digits, hashed as a string under the bigint tag (allocates; rare).
 * - Uint8Array (and Buffer): the content, not the identity, 4 bytes per word, little-endian.
 *
 * Results are left in `h1`/`h2` instead of returned, so that no call allocates.
 */
import { typeError } from '../errors.js';

/** What can be counted. Composite keys (customer + origin) are the caller's string. */
export type Key = string | number | bigint | Uint8Array;

const TAG_BYTES = 0;
const TAG_STRING = 0x7300;
const TAG_NUMBER = 0x6e00;
const TAG_BIGINT = 0x6200;

// Scratch view to read a double's bits without allocating.
const f64 = new Float64Array(1);
const i32 = new Int32Array(f64.buffer);

function invalidKey(key: unknown): TypeError {
  return typeError('key', 'a string, a finite number, a bigint or a Uint8Array', key);
}

export class KeyHasher {
  /** Low 32 bits of the last hash (signed int32). */
  h1 = 0;
  /** High 32 bits of the last hash (signed int32). */
  h2 = 0;
  private readonly k0: number;
  private readonly k1: number;

  /** `k0`, `k1`: the 64-bit key as two int32 words (see `hashKeyWords`). */
  constructor(k0: number, k1: number) {
    this.k0 = k0 | 0;
    this.k1 = k1 | 0;
  }

  /** Hashes any valid key; TypeError naming `key` otherwise. */
  hash(key: Key): void {
    if (typeof key === 'number') this.hashNumber(key);
    else if (typeof key === 'string') this.hashString(key, TAG_STRING);
    else if (key instanceof Uint8Array) this.hashBytes(key, 0, key.length);
    else if (typeof key === 'bigint') this.hashString(key.toString(16), TAG_BIGINT);
    else throw invalidKey(key);
  }

  hashNumber(key: number): void {
    // x - x is 0 for every finite number and NaN for NaN and +-Infinity.
    if (key - key !== 0) throw invalidKey(key);
    f64[0] = key === 0 ? 0 : key; // -0 is 0
    const lo = i32[0];
    const hi = i32[1];
    let v0 = this.k0;
    let v1 = this.k1 ^ 0xee ^ TAG_NUMBER;
    let v2 = this.k0 ^ 0x6c796765;
    let v3 = this.k1 ^ 0x74656462;
    // Two message words and the length block (8 bytes: 8 << 24).
    for (let i = 0; i < 3; i++) {
      const m = i === 0 ? lo : i === 1 ? hi : 0x08000000;
      v3 ^= m;
      v0 = (v0 + v1) | 0;
      v1 = (v1 << 5) | (v1 >>> 27);
      v1 ^= v0;
      v0 = (v0 << 16) | (v0 >>> 16);
      v2 = (v2 + v3) | 0;
      v3 = (v3 << 8) | (v3 >>> 24);
      v3 ^= v2;
      v0 = (v0 + v3) | 0;
      v3 = (v3 << 7) | (v3 >>> 25);
      v3 ^= v0;
      v2 = (v2 + v1) | 0;
      v1 = (v1 << 13) | (v1 >>> 19);
      v1 ^= v2;
      v2 = (v2 << 16) | (v2 >>> 16);
      v0 ^= m;
    }
    this.finish(v0, v1, v2, v3);
  }

  /** UTF-16 code units of `key`, two per word. */
  hashString(key: string, tag: number): void {
    const n = key.length;
    const words = n >>> 1;
    // Length block: byte length mod 256 in the top byte, an odd last code unit below it.
    const last = (n << 25) | (n & 1 ? key.charCodeAt(n - 1) : 0);
    let v0 = this.k0;
    let v1 = this.k1 ^ 0xee ^ tag;
    let v2 = this.k0 ^ 0x6c796765;
    let v3 = this.k1 ^ 0x74656462;
    for (let i = 0; i <= words; i++) {
      const m = i < words ? key.charCodeAt(2 * i) | (key.charCodeAt(2 * i + 1) << 16) : last;
      v3 ^= m;
      v0 = (v0 + v1) | 0;
      v1 = (v1 << 5) | (v1 >>> 27);
      v1 ^= v0;
      v0 = (v0 << 16) | (v0 >>> 16);
      v2 = (v2 + v3) | 0;
      v3 = (v3 << 8) | (v3 >>> 24);
      v3 ^= v2;
      v0 = (v0 + v3) | 0;
      v3 = (v3 << 7) | (v3 >>> 25);
      v3 ^= v0;
      v2 = (v2 + v1) | 0;
      v1 = (v1 << 13) | (v1 >>> 19);
      v1 ^= v2;
      v2 = (v2 << 16) | (v2 >>> 16);
      v0 ^= m;
    }
    this.finish(v0, v1, v2, v3);
  }

  /** Bytes `start` to `end` of `bytes` (a Buffer slice of a larger read is fine). */
  hashBytes(bytes: Uint8Array, start: number, end: number): void {
    const n = end - start;
    const words = n >>> 2;
    const tail = start + (words << 2);
    let last = n << 24;
    const rest = n & 3;
    if (rest > 0) last |= bytes[tail];
    if (rest > 1) last |= bytes[tail + 1] << 8;
    if (rest > 2) last |= bytes[tail + 2] << 16;
    let v0 = this.k0;
    let v1 = this.k1 ^ 0xee ^ TAG_BYTES;
    let v2 = this.k0 ^ 0x6c796765;
    let v3 = this.k1 ^ 0x74656462;
    for (let i = 0, p = start; i <= words; i++, p += 4) {
      const m =
        i < words
          ? bytes[p] | (bytes[p + 1] << 8) | (bytes[p + 2] << 16) | (bytes[p + 3] << 24)
          : last;
      v3 ^= m;
      v0 = (v0 + v1) | 0;
      v1 = (v1 << 5) | (v1 >>> 27);
      v1 ^= v0;
      v0 = (v0 << 16) | (v0 >>> 16);
      v2 = (v2 + v3) | 0;
      v3 = (v3 << 8) | (v3 >>> 24);
      v3 ^= v2;
      v0 = (v0 + v3) | 0;
      v3 = (v3 << 7) | (v3 >>> 25);
      v3 ^= v0;
      v2 = (v2 + v1) | 0;
      v1 = (v1 << 13) | (v1 >>> 19);
      v1 ^= v2;
      v2 = (v2 << 16) | (v2 >>> 16);
      v0 ^= m;
    }
    this.finish(v0, v1, v2, v3);
  }

  /** Finalization of HalfSipHash with 64-bit output: 3 rounds per 32-bit half. */
  private finish(v0: number, v1: number, v2: number, v3: number): void {
    v2 ^= 0xee;
    for (let r = 0; r < 6; r++) {
      if (r === 3) {
        this.h1 = v1 ^ v3;
        v1 ^= 0xdd;
      }
      v0 = (v0 + v1) | 0;
      v1 = (v1 << 5) | (v1 >>> 27);
      v1 ^= v0;
      v0 = (v0 << 16) | (v0 >>> 16);
      v2 = (v2 + v3) | 0;
      v3 = (v3 << 8) | (v3 >>> 24);
      v3 ^= v2;
      v0 = (v0 + v3) | 0;
      v3 = (v3 << 7) | (v3 >>> 25);
      v3 ^= v0;
      v2 = (v2 + v1) | 0;
      v1 = (v1 << 13) | (v1 >>> 19);
      v1 ^= v2;
      v2 = (v2 << 16) | (v2 >>> 16);
    }
    this.h2 = v1 ^ v3;
  }
}
