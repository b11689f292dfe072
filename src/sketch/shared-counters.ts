/**
 * Counters in a SharedArrayBuffer, updated with Atomics: one sketch for every worker_thread of a
 * process, with no lock and nothing lost.
 *
 * Layout (all little-endian, as the platform's typed arrays):
 *
 *   bytes        what
 *   0-63         header, Int32 words: 0 magic "HCSH", 1 layout version, 2 width, 3 depth,
 *                4 flags (bit 0 conservative), 5 saturated (0 or 1), 6 sketch objects so far,
 *                7 total words claimed so far, 8-9 fingerprint of the secret, 10-11 random id
 *                of this sketch, 12-13 the total's overflow (a BigInt64), 14 clears so far,
 *                15 checks that a handle's memory is its buffer (see sameMemory)
 *   64-4159      the total, in 1024 Int32 words, 16 to a 64-byte cache line
 *   4160-        the cells, 4 * width * depth bytes, row after row (as LocalCounters)
 *
 * The header lets `attach` check that a buffer is what its handle says (dimensions, update rule,
 * secret) before any cell is read. It is written once, at creation, and only read after.
 *
 * Cells. Every change of a cell is a compare-and-swap (CAS) that computes the saturating sum
 * from the value it replaces, so two threads adding to one cell never lose an update and a cell
 * never wraps: a saturated cell is never written again. `Atomics.add` would be one instruction
 * cheaper, but it cannot saturate: it adds blindly, and no check made before it holds at the
 * moment it runs (a thread descheduled between the check and the add can wake to find the cell
 * saturated by others, and wrap it). So there is no "safe" case for a blind add on 32-bit
 * cells; bench/shared.ts measures what the CAS costs against it.
 *
 * Total. Exact to 2^53 like the local total, without a lock and without allocating: a BigInt64
 * would take one `Atomics.add`, but that returns a fresh BigInt on every call, and the garbage
 * it makes (measured: 30 times the scavenges) stops two threads from scaling. So the total is
 * a sum of Int32 words. Each sketch object (one per thread, normally) adds to a word of its
 * own, chosen round-robin among the first 64, one per cache line, so that threads do not fight
 * over a line; each add is a CAS that never lets a word overflow. A word that cannot take an
 * add stays as it is, exactly valued, and the object moves on to a fresh word of the pool,
 * claimed with one `Atomics.add`. Every word is valid at every moment, so `total` (the sum of
 * the words and the overflow) is exact whenever it is read, and a thread stopped between two
 * operations leaves nothing half done. The 1024 words hold at least 2^40; beyond, adds go to
 * the overflow, a BigInt64 (allocating, but only after a trillion counted).
 *
 * A thread terminated in the middle of an update cannot leave anything locked: there is no
 * lock. Its last update may be in some rows and not others (which can only raise an estimate)
 * and in the cells but not yet in the total.
 */
import { getRandomValues } from 'node:crypto';
import { SHARED_LAYOUT } from '../engine/layout.js';
import { engineAvailable, engineMemory, pageBytes } from '../engine/memory.js';
import { rangeError, typeError } from '../errors.js';
import { sameBytes } from '../hash/secret.js';
import { SCALE_ONE } from './aging.js';
import {
  type Counters,
  largestMagnitude,
  SATURATED,
  saturatingSum,
  scaledCell,
} from './counters.js';

const MAGIC = 0x48534348; // "HCSH" read as a little-endian u32
const LAYOUT_VERSION = 2;
const HEADER_BYTES = SHARED_LAYOUT.words;
const TOTAL_WORDS = (SHARED_LAYOUT.cells - SHARED_LAYOUT.words) / 4;
const WORDS_PER_LINE = 16;
const LINES = TOTAL_WORDS / WORDS_PER_LINE;
const CELLS_OFFSET = SHARED_LAYOUT.cells;
const FLAG_CONSERVATIVE = 1;
const INT32_MAX = 0x7fffffff;

// Header words.
const W_MAGIC = 0;
const W_VERSION = 1;
const W_WIDTH = 2;
const W_DEPTH = 3;
const W_FLAGS = 4;
const W_SATURATED = SHARED_LAYOUT.saturated >> 2;
const W_OBJECTS = 6;
const W_CLAIMED = SHARED_LAYOUT.claimed >> 2;
const W_FINGERPRINT = 8;
const W_ID = 10;
const W_CLEARS = 14;
const W_PROBE = 15;
/** Header bytes 48-55, as an index into a BigInt64Array over the header. */
const OVERFLOW = SHARED_LAYOUT.overflow >> 3;

/**
 * Where the c-th total word lies: claims go round the cache lines first, so that the words in
 * use at one time are on different lines. Claims 0 to 63 are the objects' first words.
 */
function wordAt(claim: number): number {
  return (claim % LINES) * WORDS_PER_LINE + Math.floor(claim / LINES);
}

/** A shared memory's buffer, which is a SharedArrayBuffer (the DOM types say ArrayBuffer). */
function memoryBuffer(memory: WebAssembly.Memory): SharedArrayBuffer {
  return memory.buffer as unknown as SharedArrayBuffer;
}

/**
 * Whether two SharedArrayBuffers (a handle's buffer and its memory's, which arrive as two
 * objects after a postMessage) are the same memory, not a copy: an add through one must show
 * through the other. The probe word only grows, so through the same memory the value read
 * after the add differs from the one before, whatever other threads do meanwhile; through a
 * copy it stays, unless another thread probes the real memory at that very moment.
 */
function sameMemory(a: SharedArrayBuffer, b: SharedArrayBuffer): boolean {
  const through = new Int32Array(b, 0, HEADER_BYTES / 4);
  const before = Atomics.load(through, W_PROBE);
  Atomics.add(new Int32Array(a, 0, HEADER_BYTES / 4), W_PROBE, 1);
  return Atomics.load(through, W_PROBE) !== before;
}

/** Bytes of the SharedArrayBuffer of a width x depth sketch. */
export function sharedBytes(width: number, depth: number): number {
  return CELLS_OFFSET + 4 * width * depth;
}

/**
 * Zeroes `words` one by one, each by a compare-and-set from the value just read, while
 * `tags[tag]` holds `expected` (see Counters.clearWhile); false if it stopped because the tag
 * changed.
 */
function sweep(words: Int32Array, tags: Int32Array, tag: number, expected: number): boolean {
  for (let i = 0; i < words.length; i++) {
    const value = Atomics.load(words, i);
    if (value === 0) continue;
    if (Atomics.load(tags, tag) !== expected) return false;
    Atomics.compareExchange(words, i, value, 0);
  }
  return true;
}

/** What shared memory is made for and checked against: a sketch's shape, rule and secret. */
export interface SharedSketch {
  readonly width: number;
  readonly depth: number;
  readonly conservative: boolean;
  /** The secret's 8-byte fingerprint. */
  readonly fingerprint: Uint8Array;
}

export class SharedCounters implements Counters {
  /** The shared memory; sent to other threads in the sketch's handle. */
  readonly buffer: SharedArrayBuffer;
  /**
   * The same bytes as a WebAssembly.Memory, for the engine: shared sketches are allocated as
   * one wherever the process has WebAssembly (rounded up to whole pages).
   */
  readonly memory: WebAssembly.Memory | undefined;
  readonly cells: Int32Array;
  private readonly header: Int32Array;
  private readonly words: Int32Array;
  private readonly overflow: BigInt64Array;
  /** The total word this object adds to (an index into `words`), or -1: the overflow. */
  private word: number;

  private constructor(
    buffer: SharedArrayBuffer,
    memory: WebAssembly.Memory | undefined,
    width: number,
    depth: number,
  ) {
    this.buffer = buffer;
    this.memory = memory;
    this.header = new Int32Array(buffer, 0, HEADER_BYTES / 4);
    this.words = new Int32Array(buffer, HEADER_BYTES, TOTAL_WORDS);
    this.overflow = new BigInt64Array(buffer, 0, HEADER_BYTES / 8);
    this.cells = new Int32Array(buffer, CELLS_OFFSET, width * depth);
    this.word = wordAt(Atomics.add(this.header, W_OBJECTS, 1) % LINES);
  }

  /** New shared memory for a sketch of this shape, rule and secret. */
  static create(sketch: SharedSketch): SharedCounters {
    const { width, depth, conservative, fingerprint } = sketch;
    const bytes = sharedBytes(width, depth);
    const memory = engineAvailable() ? engineMemory(bytes, true) : undefined;
    const buffer = memory === undefined ? new SharedArrayBuffer(bytes) : memoryBuffer(memory);
    const header = new Int32Array(buffer, 0, HEADER_BYTES / 4);
    header[W_MAGIC] = MAGIC;
    header[W_VERSION] = LAYOUT_VERSION;
    header[W_WIDTH] = width;
    header[W_DEPTH] = depth;
    header[W_FLAGS] = conservative ? FLAG_CONSERVATIVE : 0;
    new Uint8Array(buffer, W_FINGERPRINT * 4, 8).set(fingerprint);
    // Into a private array first: Node 26's getRandomValues, per WebCrypto, refuses a view on
    // a SharedArrayBuffer.
    new Uint8Array(buffer, W_ID * 4, 8).set(getRandomValues(new Uint8Array(8)));
    return new SharedCounters(buffer, memory, width, depth);
  }

  /**
   * The counters in `buffer`, after checking that it is the memory of a sketch of this shape,
   * rule and secret: TypeError for something that is not a SharedArrayBuffer, RangeError for one
   * that does not match. `name` is the parameter the errors name. `memory`, the handle's
   * WebAssembly.Memory if it has one, must hold the same bytes.
   */
  static open(name: string, given: unknown, memory: unknown, sketch: SharedSketch): SharedCounters {
    const { width, depth, conservative, fingerprint } = sketch;
    if (!(given instanceof SharedArrayBuffer)) {
      throw typeError(name, "a SharedArrayBuffer (a shared sketch's handle.buffer)", given);
    }
    const buffer = given;
    const expected = sharedBytes(width, depth);
    if (buffer.byteLength !== expected && buffer.byteLength !== pageBytes(expected)) {
      throw rangeError(
        name,
        `${expected} bytes long (or ${pageBytes(expected)}, in whole pages), the memory of a ` +
          `${width} x ${depth} shared sketch`,
        buffer,
      );
    }
    const header = new Int32Array(buffer, 0, HEADER_BYTES / 4);
    if (header[W_MAGIC] !== MAGIC || header[W_VERSION] !== LAYOUT_VERSION) {
      throw new RangeError(`${name} is not the memory of a hotcount shared sketch`);
    }
    if (header[W_WIDTH] !== width || header[W_DEPTH] !== depth) {
      throw new RangeError(
        `${name} holds a ${header[W_WIDTH]} x ${header[W_DEPTH]} sketch, not ${width} x ${depth}`,
      );
    }
    if (((header[W_FLAGS] & FLAG_CONSERVATIVE) !== 0) !== conservative) {
      throw new RangeError(
        `${name} holds a ${conservative ? 'plain' : 'conservative'} sketch, not a ` +
          `${conservative ? 'conservative' : 'plain'} one`,
      );
    }
    if (!sameBytes(new Uint8Array(buffer, W_FINGERPRINT * 4, 8), fingerprint)) {
      throw new RangeError('secret does not match the secret of the shared sketch in buffer');
    }
    // The memory, for the engine, must be the same bytes: a copy would take the updates away.
    let engine: WebAssembly.Memory | undefined;
    if (memory !== undefined) {
      if (
        !engineAvailable() ||
        !(memory instanceof WebAssembly.Memory) ||
        !(memory.buffer instanceof SharedArrayBuffer)
      ) {
        throw typeError('handle.memory', "a shared sketch's shared WebAssembly.Memory", memory);
      }
      const bytes = memoryBuffer(memory);
      if (bytes.byteLength !== buffer.byteLength || !sameMemory(buffer, bytes)) {
        throw new RangeError(`handle.memory is not the memory of ${name}: updates would be lost`);
      }
      engine = memory;
    }
    return new SharedCounters(buffer, engine, width, depth);
  }

  /** The total word this object adds to; the engine of this thread adds to the same. */
  get totalWord(): number {
    return this.word;
  }

  /** 16 hex digits that tell this shared sketch from any other, the same in every thread. */
  get id(): string {
    return Buffer.from(this.buffer, W_ID * 4, 8).toString('hex');
  }

  get total(): number {
    let sum = 0; // exact: at most 1024 words below 2^31 each
    for (let i = 0; i < TOTAL_WORDS; i++) sum += Atomics.load(this.words, i);
    return sum + Number(Atomics.load(this.overflow, OVERFLOW));
  }

  get clears(): number {
    return Atomics.load(this.header, W_CLEARS);
  }

  get saturated(): boolean {
    return Atomics.load(this.header, W_SATURATED) !== 0;
  }

  get memoryBytes(): number {
    return this.buffer.byteLength;
  }

  load(cell: number): number {
    return Atomics.load(this.cells, cell);
  }

  add(cell: number, delta: number): number {
    const cells = this.cells;
    let value = Atomics.load(cells, cell);
    for (;;) {
      if (value === SATURATED || value === -SATURATED) return value;
      const next = saturatingSum(value, delta);
      const seen = Atomics.compareExchange(cells, cell, value, next);
      if (seen === value) {
        if (next === SATURATED || next === -SATURATED) this.markSaturated();
        return next;
      }
      value = seen; // another thread wrote the cell first: add to what it wrote
    }
  }

  addEach(rowCells: Int32Array, count: number, delta: number): number {
    let min = SATURATED;
    for (let row = 0; row < count; row++) {
      const value = this.add(rowCells[row], delta);
      if (value < min) min = value;
    }
    return min;
  }

  /**
   * Adds each cell of `from` (a thread's private delta, see CountMinSketch's `foldEvery`) into
   * the same cell here; the caller clears the delta after. Each add is the saturating CAS of
   * `add`, so folds from several threads and direct updates never lose one another; one loop,
   * with no call per cell, since a fold walks every cell of the sketch.
   */
  foldFrom(from: Int32Array): void {
    const cells = this.cells;
    let saturated = false;
    for (let i = 0; i < from.length; i++) {
      const delta = from[i];
      if (delta === 0) continue;
      let value = Atomics.load(cells, i);
      for (;;) {
        if (value === SATURATED || value === -SATURATED) break;
        const next = saturatingSum(value, delta);
        const seen = Atomics.compareExchange(cells, i, value, next);
        if (seen === value) {
          if (next === SATURATED || next === -SATURATED) saturated = true;
          break;
        }
        value = seen;
      }
    }
    if (saturated) this.markSaturated();
  }

  raise(cell: number, value: number): void {
    const cells = this.cells;
    let current = Atomics.load(cells, cell);
    while (current < value && current !== -SATURATED) {
      const seen = Atomics.compareExchange(cells, cell, current, value);
      if (seen === current) {
        if (value === SATURATED) this.markSaturated();
        return;
      }
      current = seen;
    }
  }

  raiseFrom(cell: number, expected: number, value: number): boolean {
    if (expected === -SATURATED) return true;
    if (Atomics.compareExchange(this.cells, cell, expected, value) !== expected) return false;
    if (value === SATURATED) this.markSaturated();
    return true;
  }

  addTotal(delta: number): void {
    const words = this.words;
    for (let word = this.word; word !== -1; word = this.claimWord()) {
      let value = Atomics.load(words, word);
      for (;;) {
        const next = value + delta;
        if (next > INT32_MAX || next < -INT32_MAX) break; // full: the word stays as it is
        const seen = Atomics.compareExchange(words, word, value, next);
        if (seen === value) return;
        value = seen;
      }
    }
    Atomics.add(this.overflow, OVERFLOW, BigInt(delta));
  }

  /** Moves this object on to a fresh total word, or to the overflow (-1) once all are taken. */
  private claimWord(): number {
    const claim = LINES + Atomics.add(this.header, W_CLAIMED, 1);
    this.word = claim < TOTAL_WORDS ? wordAt(claim) : -1;
    return this.word;
  }

  /**
   * Zeroes the cells, then the total and the flag. Not atomic as a whole: an update running at
   * the same time may survive in some rows (an overestimate) or in the total only.
   */
  clear(): void {
    this.cells.fill(0);
    for (let i = 0; i < TOTAL_WORDS; i++) Atomics.store(this.words, i, 0);
    Atomics.store(this.overflow, OVERFLOW, 0n);
    Atomics.store(this.header, W_CLAIMED, 0); // the pool anew (a word claimed twice is shared, still exact)
    Atomics.store(this.header, W_SATURATED, 0);
    // Last: a part that sees the new count forgets its table (HeavyHitters), and the sketch is
    // cleared by then.
    Atomics.add(this.header, W_CLEARS, 1);
  }

  clearWhile(tags: Int32Array, tag: number, expected: number): void {
    if (!sweep(this.cells, tags, tag, expected)) return;
    if (!sweep(this.words, tags, tag, expected)) return;
    // The overflow holds nothing below a trillion counted; a window never gets there.
    if (Atomics.load(tags, tag) === expected) Atomics.store(this.header, W_SATURATED, 0);
  }

  scale(scale: number): void {
    const cells = this.cells;
    for (let i = 0; i < cells.length; i++) {
      let value = Atomics.load(cells, i);
      for (;;) {
        const scaled = scaledCell(value, scale);
        if (scaled === value) break;
        const seen = Atomics.compareExchange(cells, i, value, scaled);
        if (seen === value) break;
        value = seen; // an update landed first: scale what it left
      }
    }
    // The total's words, each rounded up, so the total still bounds what the cells hold.
    const words = this.words;
    for (let i = 0; i < TOTAL_WORDS; i++) {
      let value = Atomics.load(words, i);
      while (value !== 0) {
        const scaled = Math.ceil((value * scale) / SCALE_ONE);
        const seen = Atomics.compareExchange(words, i, value, scaled);
        if (seen === value) break;
        value = seen;
      }
    }
    const overflow = Atomics.load(this.overflow, OVERFLOW);
    if (overflow !== 0n) {
      const scaled = (overflow * BigInt(scale) + BigInt(SCALE_ONE - 1)) / BigInt(SCALE_ONE);
      Atomics.sub(this.overflow, OVERFLOW, overflow - scaled);
    }
  }

  restore(total: number): void {
    Atomics.store(this.overflow, OVERFLOW, BigInt(total));
    if (largestMagnitude(this.cells) === SATURATED) this.markSaturated();
  }

  private markSaturated(): void {
    Atomics.store(this.header, W_SATURATED, 1);
  }
}
