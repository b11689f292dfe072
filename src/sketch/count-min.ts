/**
 * A Count-Min sketch with keyed hashing, signed saturating counters and optional conservative
 * update.
 *
 * Layout. `depth` rows of `width` 32-bit counters, row after row in one Int32Array (so the
 * memory is exactly 4 * width * depth bytes, whatever the number of keys). A key is hashed once,
 * with a keyed 64-bit PRF (see `hash/key-hasher.ts`), into two 32-bit halves h1 and h2; row i
 * uses column g_i = h1 + i * h2 (mod 2^32) mapped onto [0, width) by multiply-shift
 * (floor(g_i * width / 2^32)). Kirsch & Mitzenmacher ("Less hashing, same performance", ESA
 * 2006) show that two hashes combined this way keep the sketch's guarantees, so one hash per key
 * serves every row. Multiply-shift (Lemire, "A fast alternative to the modulo reduction", 2016)
 * avoids a division and needs no power-of-two width; in doubles it is exact enough: g * width
 * < 2^60 is rounded by at most 2^7 < width when it exceeds 2^53, so the column stays below width.
 *
 * Guarantee (Cormode & Muthukrishnan 2005, Theorem 1). For every key whose true count never goes
 * negative (the strict turnstile model), the estimate (the minimum over its d cells) is never
 * below the true count, and exceeds it by more than epsilon * N with probability at most delta,
 * where epsilon = e / width, delta = e^-depth and N is the net total of updates. `errorBound`
 * is that epsilon * N.
 *
 * Conservative update (Estan & Varghese, "New directions in traffic measurement and
 * accounting", SIGCOMM 2002): an increment raises each of the key's cells only up to
 * (current estimate + by) instead of adding to all of them. Every cell of a key stays at least
 * its true count, so estimates are still never low, and cells grow less, so estimates are
 * tighter (cell by cell never above the plain sketch of the same stream). It cannot decrement:
 * a decrement would have to know which cells were raised by this key.
 *
 * Counters saturate instead of wrapping (see `counters.ts`). The rules below run over the
 * `Counters` seam, so local, shared and remote storage share them.
 */
import { rangeError, typeError } from '../errors.js';
import { type Key, KeyHasher } from '../hash/key-hasher.js';
import {
  copySecret,
  hashKeyWords,
  randomSecret,
  sameBytes,
  secretFingerprint,
} from '../hash/secret.js';
import { type Counters, LocalCounters, SATURATED } from './counters.js';
import { type DimensionOptions, resolveDimensions } from './dimensions.js';
import { decodeSketch, encodeSketch, readCells } from './format.js';

export interface CountMinOptions extends DimensionOptions {
  /** Conservative update (tighter estimates, no decrement). Default false. */
  conservative?: boolean;
  /** Hashing secret, at least 16 bytes. Default: 16 random bytes. Sketches to merge share it. */
  secret?: Uint8Array;
}

/** 2^-32, to map a 32-bit hash onto [0, width) by multiplication. */
const INV_2_32 = 1 / 4294967296;

/** Fast check for an amount: an integer from 0 to 2^31 - 1; the slow path explains. */
export function checkAmount(by: number): void {
  if (typeof by === 'number' && (by & SATURATED) === by) return;
  if (typeof by !== 'number') throw typeError('by', 'a number', by);
  throw rangeError('by', 'an integer from 0 to 2^31 - 1', by);
}

export class CountMinSketch {
  /** Counters per row. */
  readonly width: number;
  /** Rows. */
  readonly depth: number;
  /** Whether this sketch uses conservative update. */
  readonly conservative: boolean;
  /** @internal The keyed hasher; HeavyHitters reuses its output to avoid hashing twice. */
  readonly hasher: KeyHasher;
  /** @internal */
  readonly counters: Counters;
  private readonly secretBytes: Uint8Array;
  private readonly fingerprint: Uint8Array;
  /** Scratch: the key's cell in each row, computed once per update. */
  private readonly rowCells: Int32Array;

  constructor(options: CountMinOptions = {}) {
    if (options === null || typeof options !== 'object') {
      throw typeError('options', 'an object', options);
    }
    const { width, depth } = resolveDimensions(options);
    const conservative = options.conservative ?? false;
    if (typeof conservative !== 'boolean') {
      throw typeError('conservative', 'a boolean', conservative);
    }
    this.width = width;
    this.depth = depth;
    this.conservative = conservative;
    this.secretBytes =
      options.secret === undefined ? randomSecret() : copySecret(options.secret, 'secret');
    this.fingerprint = secretFingerprint(this.secretBytes);
    const [k0, k1] = hashKeyWords(this.secretBytes);
    this.hasher = new KeyHasher(k0, k1);
    this.counters = new LocalCounters(width * depth);
    this.rowCells = new Int32Array(depth);
  }

  /** Adds `by` (default 1) to `key`; returns the key's estimate after the update. */
  increment(key: Key, by = 1): number {
    checkAmount(by);
    const hasher = this.hasher;
    hasher.hash(key);
    return this.incrementHash(hasher.h1, hasher.h2, by);
  }

  /**
   * Subtracts `by` (default 1) from `key`; returns the key's estimate after the update.
   * Estimates stay upper bounds only while no key's true count goes below zero.
   * TypeError on a conservative sketch.
   */
  decrement(key: Key, by = 1): number {
    if (this.conservative) {
      throw new TypeError(
        'decrement is not defined on a conservative sketch: conservative update cannot undo an ' +
          'increment; create the sketch with conservative: false to count both ways',
      );
    }
    checkAmount(by);
    const hasher = this.hasher;
    hasher.hash(key);
    return this.addHash(hasher.h1, hasher.h2, -by);
  }

  /** Never below the key's true count (strict turnstile); SATURATED reads "at least this". */
  estimate(key: Key): number {
    const hasher = this.hasher;
    hasher.hash(key);
    return this.estimateHash(hasher.h1, hasher.h2);
  }

  /** @internal Increment by hash, `by` already validated. */
  incrementHash(h1: number, h2: number, by: number): number {
    return this.conservative ? this.raiseHash(h1, h2, by) : this.addHash(h1, h2, by);
  }

  /** @internal Estimate by hash. */
  estimateHash(h1: number, h2: number): number {
    const counters = this.counters;
    const width = this.width;
    let min = SATURATED;
    for (let row = 0, offset = 0; row < this.depth; row++, offset += width) {
      const g = (h1 + Math.imul(row, h2)) >>> 0;
      const value = counters.load(offset + ((g * width * INV_2_32) | 0));
      if (value < min) min = value;
    }
    return min;
  }

  /** Plain update: add `delta` to every row's cell; the estimate is the least of the results. */
  private addHash(h1: number, h2: number, delta: number): number {
    const width = this.width;
    const depth = this.depth;
    const rowCells = this.rowCells;
    for (let row = 0, offset = 0; row < depth; row++, offset += width) {
      const g = (h1 + Math.imul(row, h2)) >>> 0;
      rowCells[row] = offset + ((g * width * INV_2_32) | 0);
    }
    const counters = this.counters;
    const min = counters.addEach(rowCells, depth, delta);
    counters.addTotal(delta);
    return min;
  }

  /** Conservative update: raise every row's cell to (estimate + by), saturating. */
  private raiseHash(h1: number, h2: number, by: number): number {
    const counters = this.counters;
    const width = this.width;
    const depth = this.depth;
    const rowCells = this.rowCells;
    let estimate = SATURATED;
    for (let row = 0, offset = 0; row < depth; row++, offset += width) {
      const g = (h1 + Math.imul(row, h2)) >>> 0;
      const cell = offset + ((g * width * INV_2_32) | 0);
      rowCells[row] = cell;
      const value = counters.load(cell);
      if (value < estimate) estimate = value;
    }
    const target = estimate >= SATURATED - by ? SATURATED : estimate + by;
    for (let row = 0; row < depth; row++) counters.raise(rowCells[row], target);
    counters.addTotal(by);
    return target;
  }

  /** Net sum of all updates (N). */
  get total(): number {
    return this.counters.total;
  }

  /** epsilon * max(N, 0): under strict turnstile, estimate - true <= errorBound w.p. 1 - delta. */
  get errorBound(): number {
    return this.epsilon * Math.max(this.counters.total, 0);
  }

  /** Effective relative error, e / width. */
  get epsilon(): number {
    return Math.E / this.width;
  }

  /** Effective failure probability, e^-depth. */
  get delta(): number {
    return Math.exp(-this.depth);
  }

  /** True once any counter has saturated at +/-(2^31 - 1). */
  get saturated(): boolean {
    return this.counters.saturated;
  }

  /** Bytes of counter storage: 4 * width * depth. */
  get memoryBytes(): number {
    return this.counters.cells.byteLength;
  }

  /** A copy of the hashing secret. Sensitive: whoever has it can forge collisions. */
  get secret(): Uint8Array {
    return this.secretBytes.slice();
  }

  /**
   * Adds `other` into this sketch, cell by cell (saturating), and returns this.
   * Plain sketches: the result equals the sketch of the two streams concatenated.
   * Conservative sketches: the result never underestimates and is never above the plain sketch
   * of the concatenated streams (so the same error bound holds), but it is in general above the
   * conservative sketch of the concatenated streams. It stays a conservative sketch: further
   * conservative updates keep every guarantee.
   * RangeError unless width, depth, secret and update rule are the same.
   */
  merge(other: CountMinSketch): this {
    if (!(other instanceof CountMinSketch)) throw typeError('other', 'a CountMinSketch', other);
    if (other.width !== this.width || other.depth !== this.depth) {
      throw new RangeError(
        `other must have the same dimensions: this is ${this.width} x ${this.depth}, ` +
          `other is ${other.width} x ${other.depth}`,
      );
    }
    if (other.conservative !== this.conservative) {
      throw new RangeError('other must use the same update rule (conservative or plain)');
    }
    if (!sameBytes(other.secretBytes, this.secretBytes)) {
      throw new RangeError('other must be created with the same secret');
    }
    const counters = this.counters;
    const cells = other.counters.cells;
    for (let i = 0; i < cells.length; i++) {
      const value = cells[i];
      if (value === SATURATED) counters.raise(i, SATURATED);
      else if (value !== 0) counters.add(i, value);
    }
    counters.addTotal(other.counters.total);
    return this;
  }

  /** Forgets everything counted. */
  clear(): void {
    this.counters.clear();
  }

  /** The versioned, authenticated binary form (see README, "Binary format"). */
  toBytes(): Uint8Array {
    const counters = this.counters;
    return encodeSketch(
      {
        width: this.width,
        depth: this.depth,
        conservative: this.conservative,
        saturated: counters.saturated,
        total: counters.total,
        fingerprint: this.fingerprint,
      },
      counters.cells,
      this.secretBytes,
    );
  }

  /**
   * Reads a sketch written by `toBytes`. RangeError for another secret, another version, a bad
   * checksum or a malformed blob; nothing is allocated before the blob's length is validated.
   */
  static fromBytes(bytes: Uint8Array, options: { secret: Uint8Array }): CountMinSketch {
    if (options === null || typeof options !== 'object') {
      throw typeError('options', 'an object with a secret', options);
    }
    const secret = copySecret(options.secret, 'secret');
    const header = decodeSketch(bytes, secret, secretFingerprint(secret));
    const sketch = new CountMinSketch({
      width: header.width,
      depth: header.depth,
      conservative: header.conservative,
      secret,
    });
    const counters = sketch.counters as LocalCounters;
    readCells(bytes, counters.cells);
    counters.restore(header.total);
    return sketch;
  }
}
