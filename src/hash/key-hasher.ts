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
 * - numbers: a 32-bit integer as its two's complement sign-extended to 8 bytes (so -0 is 0, and
 *   no float conversion on the common path); any other finite number as the 8 bytes of its
 *   IEEE-754 double, under another tag. NaN and +-Infinity are refused.
 * - strings: their UTF-16 code units, two per word, read with charCodeAt: no encoding, no
 *   allocation per call. (So a string and its UTF-8 bytes are different keys; that is the tag's
 *   job anyway.)
 * - bigints: their hexadecimal digits, hashed as a string under the bigint tag (allocates; rare).
 * - Uint8Array (and Buffer): the content, not the identity, 4 bytes per word, little-endian.
 * - AddressKey (address-key.ts): the address's 4 or 16 bytes as a byte key would be, under a
 *   tag of their own (the address family, and for IPv6 the prefix length).
 *
 * Results are left in `h1`/`h2` instead of returned, so that no call allocates.
 *
 * The rounds are written out, one SipRound per line (the reference C uses a macro). Measured
 * on V8 (Node 20), a loop over the rounds or a shared finalization method doubles the cost of
 * hashing an integer (38 ns against 19 ns): TurboFan neither unrolls the loop nor inlines the
 * method into these already large functions.
 */
import { typeError } from '../errors.js';
import { AddressKey } from './address-key.js';
import { TAG_BIGINT, TAG_BYTES, TAG_FLOAT, TAG_INT32, TAG_STRING } from './key-tags.js';

// The tags live in key-tags.ts, a file with no imports that the engine's generator reads;
// re-exported here so that every importer of the hasher finds them where it always did.
export { TAG_BIGINT, TAG_BYTES, TAG_FLOAT, TAG_INT32, TAG_STRING } from './key-tags.js';

/**
 * What can be counted. Composite keys (customer + origin) are the caller's string; a client's
 * network address is an AddressKey (`ipKey`).
 */
export type Key = string | number | bigint | Uint8Array | AddressKey;

// Scratch view to read a double's bits without allocating.
const f64 = new Float64Array(1);
const i32 = new Int32Array(f64.buffer);

/** What a key may be, for error messages. */
const KEY_KINDS = 'a string, a finite number, a bigint, a Uint8Array or an AddressKey';

function invalidKey(key: unknown): TypeError {
  return typeError('key', KEY_KINDS, key);
}

/** A valid key, or a TypeError naming `name` (for keys that arrive from elsewhere). */
export function checkKey(name: string, key: unknown): Key {
  if (
    typeof key === 'string' ||
    typeof key === 'bigint' ||
    key instanceof Uint8Array ||
    key instanceof AddressKey ||
    (typeof key === 'number' && Number.isFinite(key))
  ) {
    return key;
  }
  throw typeError(name, KEY_KINDS, key);
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
    else if (key instanceof AddressKey) this.hashBytes(key.bytes, 0, key.bytes.length, key.tag);
    else throw invalidKey(key);
  }

  // biome-ignore format: one SipRound per line
  hashNumber(key: number): void {
    let lo = key | 0;
    let hi = lo >> 31;
    let tag = TAG_INT32;
    if (lo !== key) {
      // x - x is 0 for every finite number and NaN for NaN and +-Infinity.
      if (key - key !== 0) throw invalidKey(key);
      f64[0] = key;
      lo = i32[0];
      hi = i32[1];
      tag = TAG_FLOAT;
    }
    let v0 = this.k0;
    let v1 = this.k1 ^ 0xee ^ tag;
    let v2 = this.k0 ^ 0x6c796765;
    let v3 = this.k1 ^ 0x74656462;
    v3 ^= lo;
    v0 = (v0 + v1) | 0; v1 = (v1 << 5) | (v1 >>> 27); v1 ^= v0; v0 = (v0 << 16) | (v0 >>> 16); v2 = (v2 + v3) | 0; v3 = (v3 << 8) | (v3 >>> 24); v3 ^= v2; v0 = (v0 + v3) | 0; v3 = (v3 << 7) | (v3 >>> 25); v3 ^= v0; v2 = (v2 + v1) | 0; v1 = (v1 << 13) | (v1 >>> 19); v1 ^= v2; v2 = (v2 << 16) | (v2 >>> 16);
    v0 ^= lo;
    v3 ^= hi;
    v0 = (v0 + v1) | 0; v1 = (v1 << 5) | (v1 >>> 27); v1 ^= v0; v0 = (v0 << 16) | (v0 >>> 16); v2 = (v2 + v3) | 0; v3 = (v3 << 8) | (v3 >>> 24); v3 ^= v2; v0 = (v0 + v3) | 0; v3 = (v3 << 7) | (v3 >>> 25); v3 ^= v0; v2 = (v2 + v1) | 0; v1 = (v1 << 13) | (v1 >>> 19); v1 ^= v2; v2 = (v2 << 16) | (v2 >>> 16);
    v0 ^= hi;
    v3 ^= 0x08000000; // length block: 8 bytes
    v0 = (v0 + v1) | 0; v1 = (v1 << 5) | (v1 >>> 27); v1 ^= v0; v0 = (v0 << 16) | (v0 >>> 16); v2 = (v2 + v3) | 0; v3 = (v3 << 8) | (v3 >>> 24); v3 ^= v2; v0 = (v0 + v3) | 0; v3 = (v3 << 7) | (v3 >>> 25); v3 ^= v0; v2 = (v2 + v1) | 0; v1 = (v1 << 13) | (v1 >>> 19); v1 ^= v2; v2 = (v2 << 16) | (v2 >>> 16);
    v0 ^= 0x08000000;
    v2 ^= 0xee;
    v0 = (v0 + v1) | 0; v1 = (v1 << 5) | (v1 >>> 27); v1 ^= v0; v0 = (v0 << 16) | (v0 >>> 16); v2 = (v2 + v3) | 0; v3 = (v3 << 8) | (v3 >>> 24); v3 ^= v2; v0 = (v0 + v3) | 0; v3 = (v3 << 7) | (v3 >>> 25); v3 ^= v0; v2 = (v2 + v1) | 0; v1 = (v1 << 13) | (v1 >>> 19); v1 ^= v2; v2 = (v2 << 16) | (v2 >>> 16);
    v0 = (v0 + v1) | 0; v1 = (v1 << 5) | (v1 >>> 27); v1 ^= v0; v0 = (v0 << 16) | (v0 >>> 16); v2 = (v2 + v3) | 0; v3 = (v3 << 8) | (v3 >>> 24); v3 ^= v2; v0 = (v0 + v3) | 0; v3 = (v3 << 7) | (v3 >>> 25); v3 ^= v0; v2 = (v2 + v1) | 0; v1 = (v1 << 13) | (v1 >>> 19); v1 ^= v2; v2 = (v2 << 16) | (v2 >>> 16);
    v0 = (v0 + v1) | 0; v1 = (v1 << 5) | (v1 >>> 27); v1 ^= v0; v0 = (v0 << 16) | (v0 >>> 16); v2 = (v2 + v3) | 0; v3 = (v3 << 8) | (v3 >>> 24); v3 ^= v2; v0 = (v0 + v3) | 0; v3 = (v3 << 7) | (v3 >>> 25); v3 ^= v0; v2 = (v2 + v1) | 0; v1 = (v1 << 13) | (v1 >>> 19); v1 ^= v2; v2 = (v2 << 16) | (v2 >>> 16);
    this.h1 = v1 ^ v3;
    v1 ^= 0xdd;
    v0 = (v0 + v1) | 0; v1 = (v1 << 5) | (v1 >>> 27); v1 ^= v0; v0 = (v0 << 16) | (v0 >>> 16); v2 = (v2 + v3) | 0; v3 = (v3 << 8) | (v3 >>> 24); v3 ^= v2; v0 = (v0 + v3) | 0; v3 = (v3 << 7) | (v3 >>> 25); v3 ^= v0; v2 = (v2 + v1) | 0; v1 = (v1 << 13) | (v1 >>> 19); v1 ^= v2; v2 = (v2 << 16) | (v2 >>> 16);
    v0 = (v0 + v1) | 0; v1 = (v1 << 5) | (v1 >>> 27); v1 ^= v0; v0 = (v0 << 16) | (v0 >>> 16); v2 = (v2 + v3) | 0; v3 = (v3 << 8) | (v3 >>> 24); v3 ^= v2; v0 = (v0 + v3) | 0; v3 = (v3 << 7) | (v3 >>> 25); v3 ^= v0; v2 = (v2 + v1) | 0; v1 = (v1 << 13) | (v1 >>> 19); v1 ^= v2; v2 = (v2 << 16) | (v2 >>> 16);
    v0 = (v0 + v1) | 0; v1 = (v1 << 5) | (v1 >>> 27); v1 ^= v0; v0 = (v0 << 16) | (v0 >>> 16); v2 = (v2 + v3) | 0; v3 = (v3 << 8) | (v3 >>> 24); v3 ^= v2; v0 = (v0 + v3) | 0; v3 = (v3 << 7) | (v3 >>> 25); v3 ^= v0; v2 = (v2 + v1) | 0; v1 = (v1 << 13) | (v1 >>> 19); v1 ^= v2; v2 = (v2 << 16) | (v2 >>> 16);
    this.h2 = v1 ^ v3;
  }

  /** UTF-16 code units of `key`, two per word. */
  // biome-ignore format: one SipRound per line
  hashString(key: string, tag: number): void {
    const n = key.length;
    const words = n >>> 1;
    let v0 = this.k0;
    let v1 = this.k1 ^ 0xee ^ tag;
    let v2 = this.k0 ^ 0x6c796765;
    let v3 = this.k1 ^ 0x74656462;
    for (let i = 0, p = 0; i < words; i++, p += 2) {
      const m = key.charCodeAt(p) | (key.charCodeAt(p + 1) << 16);
      v3 ^= m;
      v0 = (v0 + v1) | 0; v1 = (v1 << 5) | (v1 >>> 27); v1 ^= v0; v0 = (v0 << 16) | (v0 >>> 16); v2 = (v2 + v3) | 0; v3 = (v3 << 8) | (v3 >>> 24); v3 ^= v2; v0 = (v0 + v3) | 0; v3 = (v3 << 7) | (v3 >>> 25); v3 ^= v0; v2 = (v2 + v1) | 0; v1 = (v1 << 13) | (v1 >>> 19); v1 ^= v2; v2 = (v2 << 16) | (v2 >>> 16);
      v0 ^= m;
    }
    // Length block: byte length mod 256 in the top byte, an odd last code unit below it.
    const last = (n << 25) | (n & 1 ? key.charCodeAt(n - 1) : 0);
    v3 ^= last;
    v0 = (v0 + v1) | 0; v1 = (v1 << 5) | (v1 >>> 27); v1 ^= v0; v0 = (v0 << 16) | (v0 >>> 16); v2 = (v2 + v3) | 0; v3 = (v3 << 8) | (v3 >>> 24); v3 ^= v2; v0 = (v0 + v3) | 0; v3 = (v3 << 7) | (v3 >>> 25); v3 ^= v0; v2 = (v2 + v1) | 0; v1 = (v1 << 13) | (v1 >>> 19); v1 ^= v2; v2 = (v2 << 16) | (v2 >>> 16);
    v0 ^= last;
    v2 ^= 0xee;
    v0 = (v0 + v1) | 0; v1 = (v1 << 5) | (v1 >>> 27); v1 ^= v0; v0 = (v0 << 16) | (v0 >>> 16); v2 = (v2 + v3) | 0; v3 = (v3 << 8) | (v3 >>> 24); v3 ^= v2; v0 = (v0 + v3) | 0; v3 = (v3 << 7) | (v3 >>> 25); v3 ^= v0; v2 = (v2 + v1) | 0; v1 = (v1 << 13) | (v1 >>> 19); v1 ^= v2; v2 = (v2 << 16) | (v2 >>> 16);
    v0 = (v0 + v1) | 0; v1 = (v1 << 5) | (v1 >>> 27); v1 ^= v0; v0 = (v0 << 16) | (v0 >>> 16); v2 = (v2 + v3) | 0; v3 = (v3 << 8) | (v3 >>> 24); v3 ^= v2; v0 = (v0 + v3) | 0; v3 = (v3 << 7) | (v3 >>> 25); v3 ^= v0; v2 = (v2 + v1) | 0; v1 = (v1 << 13) | (v1 >>> 19); v1 ^= v2; v2 = (v2 << 16) | (v2 >>> 16);
    v0 = (v0 + v1) | 0; v1 = (v1 << 5) | (v1 >>> 27); v1 ^= v0; v0 = (v0 << 16) | (v0 >>> 16); v2 = (v2 + v3) | 0; v3 = (v3 << 8) | (v3 >>> 24); v3 ^= v2; v0 = (v0 + v3) | 0; v3 = (v3 << 7) | (v3 >>> 25); v3 ^= v0; v2 = (v2 + v1) | 0; v1 = (v1 << 13) | (v1 >>> 19); v1 ^= v2; v2 = (v2 << 16) | (v2 >>> 16);
    this.h1 = v1 ^ v3;
    v1 ^= 0xdd;
    v0 = (v0 + v1) | 0; v1 = (v1 << 5) | (v1 >>> 27); v1 ^= v0; v0 = (v0 << 16) | (v0 >>> 16); v2 = (v2 + v3) | 0; v3 = (v3 << 8) | (v3 >>> 24); v3 ^= v2; v0 = (v0 + v3) | 0; v3 = (v3 << 7) | (v3 >>> 25); v3 ^= v0; v2 = (v2 + v1) | 0; v1 = (v1 << 13) | (v1 >>> 19); v1 ^= v2; v2 = (v2 << 16) | (v2 >>> 16);
    v0 = (v0 + v1) | 0; v1 = (v1 << 5) | (v1 >>> 27); v1 ^= v0; v0 = (v0 << 16) | (v0 >>> 16); v2 = (v2 + v3) | 0; v3 = (v3 << 8) | (v3 >>> 24); v3 ^= v2; v0 = (v0 + v3) | 0; v3 = (v3 << 7) | (v3 >>> 25); v3 ^= v0; v2 = (v2 + v1) | 0; v1 = (v1 << 13) | (v1 >>> 19); v1 ^= v2; v2 = (v2 << 16) | (v2 >>> 16);
    v0 = (v0 + v1) | 0; v1 = (v1 << 5) | (v1 >>> 27); v1 ^= v0; v0 = (v0 << 16) | (v0 >>> 16); v2 = (v2 + v3) | 0; v3 = (v3 << 8) | (v3 >>> 24); v3 ^= v2; v0 = (v0 + v3) | 0; v3 = (v3 << 7) | (v3 >>> 25); v3 ^= v0; v2 = (v2 + v1) | 0; v1 = (v1 << 13) | (v1 >>> 19); v1 ^= v2; v2 = (v2 << 16) | (v2 >>> 16);
    this.h2 = v1 ^ v3;
  }

  /**
   * Bytes `start` to `end` of `bytes` (a Buffer slice of a larger read is fine), under `tag`:
   * TAG_BYTES for a byte key, an address's tag for an AddressKey's bytes.
   */
  // biome-ignore format: one SipRound per line
  hashBytes(bytes: Uint8Array, start: number, end: number, tag = TAG_BYTES): void {
    const n = end - start;
    const tail = start + (n & ~3);
    let v0 = this.k0;
    let v1 = this.k1 ^ 0xee ^ tag;
    let v2 = this.k0 ^ 0x6c796765;
    let v3 = this.k1 ^ 0x74656462;
    for (let p = start; p < tail; p += 4) {
      const m = bytes[p] | (bytes[p + 1] << 8) | (bytes[p + 2] << 16) | (bytes[p + 3] << 24);
      v3 ^= m;
      v0 = (v0 + v1) | 0; v1 = (v1 << 5) | (v1 >>> 27); v1 ^= v0; v0 = (v0 << 16) | (v0 >>> 16); v2 = (v2 + v3) | 0; v3 = (v3 << 8) | (v3 >>> 24); v3 ^= v2; v0 = (v0 + v3) | 0; v3 = (v3 << 7) | (v3 >>> 25); v3 ^= v0; v2 = (v2 + v1) | 0; v1 = (v1 << 13) | (v1 >>> 19); v1 ^= v2; v2 = (v2 << 16) | (v2 >>> 16);
      v0 ^= m;
    }
    // Length block: length mod 256 in the top byte, the 0-3 remaining bytes below it.
    const rest = n & 3;
    let last = n << 24;
    if (rest > 0) last |= bytes[tail];
    if (rest > 1) last |= bytes[tail + 1] << 8;
    if (rest > 2) last |= bytes[tail + 2] << 16;
    v3 ^= last;
    v0 = (v0 + v1) | 0; v1 = (v1 << 5) | (v1 >>> 27); v1 ^= v0; v0 = (v0 << 16) | (v0 >>> 16); v2 = (v2 + v3) | 0; v3 = (v3 << 8) | (v3 >>> 24); v3 ^= v2; v0 = (v0 + v3) | 0; v3 = (v3 << 7) | (v3 >>> 25); v3 ^= v0; v2 = (v2 + v1) | 0; v1 = (v1 << 13) | (v1 >>> 19); v1 ^= v2; v2 = (v2 << 16) | (v2 >>> 16);
    v0 ^= last;
    v2 ^= 0xee;
    v0 = (v0 + v1) | 0; v1 = (v1 << 5) | (v1 >>> 27); v1 ^= v0; v0 = (v0 << 16) | (v0 >>> 16); v2 = (v2 + v3) | 0; v3 = (v3 << 8) | (v3 >>> 24); v3 ^= v2; v0 = (v0 + v3) | 0; v3 = (v3 << 7) | (v3 >>> 25); v3 ^= v0; v2 = (v2 + v1) | 0; v1 = (v1 << 13) | (v1 >>> 19); v1 ^= v2; v2 = (v2 << 16) | (v2 >>> 16);
    v0 = (v0 + v1) | 0; v1 = (v1 << 5) | (v1 >>> 27); v1 ^= v0; v0 = (v0 << 16) | (v0 >>> 16); v2 = (v2 + v3) | 0; v3 = (v3 << 8) | (v3 >>> 24); v3 ^= v2; v0 = (v0 + v3) | 0; v3 = (v3 << 7) | (v3 >>> 25); v3 ^= v0; v2 = (v2 + v1) | 0; v1 = (v1 << 13) | (v1 >>> 19); v1 ^= v2; v2 = (v2 << 16) | (v2 >>> 16);
    v0 = (v0 + v1) | 0; v1 = (v1 << 5) | (v1 >>> 27); v1 ^= v0; v0 = (v0 << 16) | (v0 >>> 16); v2 = (v2 + v3) | 0; v3 = (v3 << 8) | (v3 >>> 24); v3 ^= v2; v0 = (v0 + v3) | 0; v3 = (v3 << 7) | (v3 >>> 25); v3 ^= v0; v2 = (v2 + v1) | 0; v1 = (v1 << 13) | (v1 >>> 19); v1 ^= v2; v2 = (v2 << 16) | (v2 >>> 16);
    this.h1 = v1 ^ v3;
    v1 ^= 0xdd;
    v0 = (v0 + v1) | 0; v1 = (v1 << 5) | (v1 >>> 27); v1 ^= v0; v0 = (v0 << 16) | (v0 >>> 16); v2 = (v2 + v3) | 0; v3 = (v3 << 8) | (v3 >>> 24); v3 ^= v2; v0 = (v0 + v3) | 0; v3 = (v3 << 7) | (v3 >>> 25); v3 ^= v0; v2 = (v2 + v1) | 0; v1 = (v1 << 13) | (v1 >>> 19); v1 ^= v2; v2 = (v2 << 16) | (v2 >>> 16);
    v0 = (v0 + v1) | 0; v1 = (v1 << 5) | (v1 >>> 27); v1 ^= v0; v0 = (v0 << 16) | (v0 >>> 16); v2 = (v2 + v3) | 0; v3 = (v3 << 8) | (v3 >>> 24); v3 ^= v2; v0 = (v0 + v3) | 0; v3 = (v3 << 7) | (v3 >>> 25); v3 ^= v0; v2 = (v2 + v1) | 0; v1 = (v1 << 13) | (v1 >>> 19); v1 ^= v2; v2 = (v2 << 16) | (v2 >>> 16);
    v0 = (v0 + v1) | 0; v1 = (v1 << 5) | (v1 >>> 27); v1 ^= v0; v0 = (v0 << 16) | (v0 >>> 16); v2 = (v2 + v3) | 0; v3 = (v3 << 8) | (v3 >>> 24); v3 ^= v2; v0 = (v0 + v3) | 0; v3 = (v3 << 7) | (v3 >>> 25); v3 ^= v0; v2 = (v2 + v1) | 0; v1 = (v1 << 13) | (v1 >>> 19); v1 ^= v2; v2 = (v2 << 16) | (v2 >>> 16);
    this.h2 = v1 ^ v3;
  }
}
