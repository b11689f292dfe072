/**
 * hotcount's WebAssembly engine: the keyed hash of src/hash/key-hasher.ts and the update rules
 * of src/sketch/count-min.ts, bit for bit, in one WebAssembly call per update (built by
 * tools/build-engine.mjs from generated WAT). The JS code stays as the reference and as the
 * fallback where WebAssembly is absent (`node --jitless`).
 *
 * Why a call into WebAssembly and not just a faster hash: measured here, the engine's hash
 * alone, called per key from JS, is no faster than the JS one (19 against 15 ns for an int);
 * what costs in JS is everything around it (bounds checks, the Counters seam, the scratch
 * arrays). So the engine takes the key and does all of it: hash, columns, the rule, the total.
 *
 * The counters live in the engine's memory, which never grows: `LocalCounters` (or
 * `SharedCounters`) views the same bytes, so merge, clear and the binary format run on them in
 * JS. Numbers travel in registers (as an f64, the engine tells int32 from double as JS does);
 * strings, byte keys and bigints are written into a scratch area of a local engine's memory
 * and hashed there; a key longer than the scratch area, and any non-number key of a shared
 * sketch (whose memory every thread writes, so it has no scratch), is hashed by the JS
 * reference and handed over as its hash.
 *
 * The modules are compiled once per process, synchronously, on first use; each sketch is an
 * instance of its own, with its memory imported.
 */
import { AddressKey } from '../hash/address-key.js';
import {
  checkKey,
  type Key,
  KeyHasher,
  TAG_BIGINT,
  TAG_BYTES,
  TAG_STRING,
} from '../hash/key-hasher.js';
import { LOCAL_ENGINE, SHARED_ENGINE } from './engine-bytes.js';
import { LOCAL_LAYOUT, SHARED_LAYOUT, STEP_LAYOUT } from './layout.js';
import { engineAvailable } from './memory.js';

export { engineAvailable } from './memory.js';

/**
 * The deepest shared conservative sketch the engine runs: it keeps each row's first read in a
 * local (see tools/engine/shared-rules.mjs, sharedRaise); a deeper one runs the JS rule.
 */
export const SHARED_CONSERVATIVE_DEPTH = 8;

/**
 * The deepest sketch whose raiseWithin (the limits' rule) runs in the engine, local or shared:
 * it keeps each row's address and first read in locals; a deeper one runs the JS rule.
 */
export const WITHIN_DEPTH = SHARED_CONSERVATIVE_DEPTH;

/** Strings up to this many characters are copied into the scratch area by a loop. */
const LOOP_CHARACTERS = 20;

/** Keys per engine call of a batch (the batch area of the local layout). */
export const BATCH_KEYS = 1024;
/** Bytes of the scratch area for one key: a longer key is hashed by the JS reference. */
const SCRATCH_BYTES = LOCAL_LAYOUT.cells - LOCAL_LAYOUT.scratch;

type Update = (key: number, delta: number) => number;
type UpdateHash = (h1: number, h2: number, delta: number) => number;
type UpdateBytes = (ptr: number, length: number, tag: number, delta: number) => number;
type UpdateWithin = (h1: number, h2: number, floor: number, by: number, ceiling: number) => number;
/** A window step: after the key, the other sketch's cells and the step's slots (STEP_LAYOUT). */
type StepNumber = (key: number, other: number, step: number) => number;
type StepBytes = (ptr: number, length: number, tag: number, other: number, step: number) => number;
type StepHash = (h1: number, h2: number, other: number, step: number) => number;
type UpdateMany = (n: number, delta: number, unsigned: number) => number;

interface Exports {
  /** `place`: a shared engine's total word, a local engine's origin (see LOCAL_LAYOUT). */
  init(k0: number, k1: number, width: number, depth: number, place?: number): void;
  addNumber: Update;
  raiseNumber: Update;
  estimateNumber: Update;
  addHash: UpdateHash;
  raiseHash: UpdateHash;
  estimateHash: UpdateHash;
  raiseWithin: UpdateWithin;
  // Local only:
  stepNumber: StepNumber;
  stepBytes: StepBytes;
  stepHash: StepHash;
  addBytes: UpdateBytes;
  raiseBytes: UpdateBytes;
  estimateBytes: UpdateBytes;
  addMany: UpdateMany;
  raiseMany: UpdateMany;
  estimateMany: UpdateMany;
  hashNumber(key: number): void;
  hashBytes(ptr: number, length: number, tag: number): void;
  hashLines(chunk: number, size: number, base: number, out: number, max: number): number;
  [layout: `layout_${string}`]: WebAssembly.Global;
  conservativeDepth: WebAssembly.Global;
}

/** What the local module's layout globals say: LOCAL_LAYOUT, and STEP_LAYOUT as step_*. */
const LOCAL_GLOBALS: Record<string, number> = { ...LOCAL_LAYOUT };
for (const [name, value] of Object.entries(STEP_LAYOUT)) LOCAL_GLOBALS[`step_${name}`] = value;

let localModule: WebAssembly.Module | undefined;
let sharedModule: WebAssembly.Module | undefined;

function compile(base64: string, layout: Record<string, number>): WebAssembly.Module {
  if (!engineAvailable()) throw new TypeError('WebAssembly is not available in this process');
  const module = new WebAssembly.Module(Buffer.from(base64, 'base64'));
  // The generator and the JS views must agree on every offset; a mismatch is a build bug.
  for (const entry of WebAssembly.Module.exports(module)) {
    if (!entry.name.startsWith('layout_')) continue;
    const name = entry.name.slice('layout_'.length);
    if (!(name in layout)) throw new Error(`engine layout has ${name}, the JS views do not`);
  }
  return module;
}

function checkLayout(exports: Exports, layout: Record<string, number>): void {
  for (const [name, value] of Object.entries(layout)) {
    const global = exports[`layout_${name}`];
    if (global === undefined || global.value !== value) {
      throw new Error(`engine layout ${name} is ${global?.value}, the JS views expect ${value}`);
    }
  }
}

/**
 * Bytes a local engine takes for `counters` cells, from its origin, rounded up to 64 so that
 * the next sketch of a group starts where the engine wants an origin (see LOCAL_LAYOUT).
 */
export function localEngineBytes(counters: number): number {
  return LOCAL_LAYOUT.cells + Math.ceil((4 * counters) / 64) * 64;
}

/** What a bare local instance offers for hashing (chunk-hasher.ts). */
export type LocalExports = Pick<Exports, 'hashBytes' | 'hashNumber' | 'hashLines'>;

/**
 * A bare instance of the local module over `memory`, keyed with k0, k1, for hashing only
 * (chunk-hasher.ts): `hashNumber` and `hashBytes` leave h1, h2 in bytes 0-7; `hashLines` finds
 * and hashes the lines of a chunk.
 */
export function localEngine(memory: WebAssembly.Memory, k0: number, k1: number): LocalExports {
  localModule ??= compile(LOCAL_ENGINE, LOCAL_GLOBALS);
  const exports = new WebAssembly.Instance(localModule, { hotcount: { memory } })
    .exports as unknown as Exports;
  exports.init(k0 | 0, k1 | 0, 1, 1);
  return exports;
}

/** What an engine runs: the sketch's shape, its rule and its secret's key words. */
export interface EngineSketch {
  readonly width: number;
  readonly depth: number;
  readonly conservative: boolean;
  readonly keyWords: readonly [number, number];
}

/**
 * One sketch's engine: its instance, over the memory that holds the sketch's counters. The
 * caller (CountMinSketch) validates amounts; keys are validated here, with the reference's
 * errors. Also a hasher with KeyHasher's interface (results in `h1`, `h2`), for HeavyHitters.
 */
export class Engine {
  h1 = 0;
  h2 = 0;
  readonly memory: WebAssembly.Memory;
  private readonly exports: Exports;
  private readonly incrementNumber: Update;
  private readonly incrementHashed: UpdateHash;
  private readonly incrementBytes: UpdateBytes;
  private readonly incrementBatch: UpdateMany;
  /** The byte address of the first cell. */
  readonly cellsAddress: number;
  /** Where this engine's part of the memory starts (0 for a shared engine). */
  private readonly origin: number;
  /** Bytes a key may take in the scratch area: -1 for a shared engine, which has none. */
  private readonly scratchBytes: number;
  /** The byte address of the scratch area. */
  private readonly scratch: number;
  /** The tag of the key `keyIn` wrote last. */
  private scratchTag = 0;
  private readonly bytes: Uint8Array;
  private readonly units: Uint16Array;
  /** The same bytes as `bytes`, as a Buffer, for its UTF-16LE write. */
  private readonly text: Buffer;
  private readonly words: Int32Array;
  private readonly batch: Int32Array;
  private readonly batchUnsigned: Uint32Array;
  private readonly reference: KeyHasher;

  private constructor(
    memory: WebAssembly.Memory,
    shared: boolean,
    sketch: EngineSketch,
    place: number,
  ) {
    const { width, depth, conservative } = sketch;
    const [k0, k1] = sketch.keyWords;
    this.memory = memory;
    let module: WebAssembly.Module;
    if (shared) {
      sharedModule ??= compile(SHARED_ENGINE, SHARED_LAYOUT);
      module = sharedModule;
    } else {
      localModule ??= compile(LOCAL_ENGINE, LOCAL_GLOBALS);
      module = localModule;
    }
    const instance = new WebAssembly.Instance(module, { hotcount: { memory } });
    const exports = instance.exports as unknown as Exports;
    checkLayout(exports, shared ? SHARED_LAYOUT : LOCAL_GLOBALS);
    if (shared && exports.conservativeDepth.value !== SHARED_CONSERVATIVE_DEPTH) {
      throw new Error('engine conservative depth differs from SHARED_CONSERVATIVE_DEPTH');
    }
    exports.init(k0 | 0, k1 | 0, width, depth, place);
    this.exports = exports;
    this.incrementNumber = conservative ? exports.raiseNumber : exports.addNumber;
    this.incrementHashed = conservative ? exports.raiseHash : exports.addHash;
    this.incrementBytes = conservative ? exports.raiseBytes : exports.addBytes;
    this.incrementBatch = conservative ? exports.raiseMany : exports.addMany;
    this.scratchBytes = shared ? -1 : SCRATCH_BYTES;
    // The views below start at the origin: offsets of LOCAL_LAYOUT index them directly.
    const origin = shared ? 0 : place;
    this.origin = origin;
    this.cellsAddress = origin + (shared ? SHARED_LAYOUT.cells : LOCAL_LAYOUT.cells);
    this.scratch = origin + LOCAL_LAYOUT.scratch;
    const buffer = memory.buffer;
    const header = shared ? 0 : LOCAL_LAYOUT.cells;
    this.bytes = new Uint8Array(buffer, origin, header);
    this.units = new Uint16Array(buffer, origin, header >> 1);
    this.text = Buffer.from(buffer, origin, header);
    this.words = new Int32Array(buffer, origin, header >> 2);
    this.batch = new Int32Array(buffer, origin + LOCAL_LAYOUT.batch, shared ? 0 : BATCH_KEYS);
    this.batchUnsigned = new Uint32Array(
      buffer,
      origin + LOCAL_LAYOUT.batch,
      shared ? 0 : BATCH_KEYS,
    );
    this.reference = new KeyHasher(k0, k1);
  }

  /**
   * An engine over `memory`, laid out as LOCAL_LAYOUT (see layout.ts) from byte `origin` (a
   * multiple of 64).
   */
  static local(memory: WebAssembly.Memory, origin: number, sketch: EngineSketch): Engine {
    return new Engine(memory, false, sketch, origin);
  }

  /**
   * An engine over a shared sketch's memory (SharedCounters' layout); `word` is the total word
   * this thread adds to (see shared-counters.ts).
   */
  static shared(memory: WebAssembly.Memory, word: number, sketch: EngineSketch): Engine {
    return new Engine(memory, true, sketch, word);
  }

  /** The sketch's rule (plain or conservative) for `by`; the estimate after it. */
  increment(key: Key, by: number): number {
    if (typeof key === 'number') {
      if (key - key !== 0) checkKey('key', key); // NaN, +-Infinity: the reference's TypeError
      return this.incrementNumber(key, by);
    }
    return this.other(key, by, this.incrementBytes, this.incrementHashed);
  }

  /** The plain rule for a signed `delta`; the estimate after it. */
  add(key: Key, delta: number): number {
    if (typeof key === 'number') {
      if (key - key !== 0) checkKey('key', key);
      return this.exports.addNumber(key, delta);
    }
    return this.other(key, delta, this.exports.addBytes, this.exports.addHash);
  }

  estimate(key: Key): number {
    if (typeof key === 'number') {
      if (key - key !== 0) checkKey('key', key);
      return this.exports.estimateNumber(key, 0);
    }
    return this.other(key, 0, this.exports.estimateBytes, this.exports.estimateHash);
  }

  incrementHash(h1: number, h2: number, by: number): number {
    return this.incrementHashed(h1, h2, by);
  }

  addHash(h1: number, h2: number, delta: number): number {
    return this.exports.addHash(h1, h2, delta);
  }

  estimateHash(h1: number, h2: number): number {
    return this.exports.estimateHash(h1, h2, 0);
  }

  /** CountMinSketch.raiseWithin, in one call (a sketch of depth up to WITHIN_DEPTH). */
  raiseWithin(h1: number, h2: number, floor: number, by: number, ceiling: number): number {
    return this.exports.raiseWithin(h1, h2, floor, by, ceiling);
  }

  /**
   * A limit's window step in one call (limits/window-step.ts; a local engine, depth up to
   * WITHIN_DEPTH): the rule is read from the slots at byte `step` of this memory and the results
   * written there; `other` is the byte address of the previous window's cells here, or -1.
   */
  step(key: Key, other: number, step: number): number {
    const exports = this.exports;
    if (typeof key === 'number') {
      if (key - key !== 0) checkKey('key', key);
      return exports.stepNumber(key, other, step);
    }
    const length = this.keyIn(key);
    if (length <= this.scratchBytes) {
      return exports.stepBytes(this.scratch, length, this.scratchTag, other, step);
    }
    this.hashByReference(key);
    return exports.stepHash(this.h1, this.h2, other, step);
  }

  /** A view of this engine's window step slots (STEP_LAYOUT), at LOCAL_LAYOUT.step. */
  stepSlots(): Float64Array {
    return new Float64Array(
      this.memory.buffer,
      this.origin + LOCAL_LAYOUT.step,
      STEP_LAYOUT.bytes >> 3,
    );
  }

  /**
   * Keys that are not numbers: their bytes into the scratch area and one call, or, when they
   * do not fit (or the engine is shared), the reference's hash and the call by hash.
   */
  private other(key: Key, delta: number, byBytes: UpdateBytes, byHash: UpdateHash): number {
    const length = this.keyIn(key);
    if (length <= this.scratchBytes) {
      const result = byBytes(this.scratch, length, this.scratchTag, delta);
      this.readHash();
      return result;
    }
    this.hashByReference(key);
    return byHash(this.h1, this.h2, delta);
  }

  /**
   * A string's UTF-16 code units into the scratch area, if they fit; its byte length. Short
   * strings by a loop, longer ones by Buffer's UTF-16LE write (raw code units, lone surrogates
   * included, as charCodeAt reads them): measured, the loop costs 14 ns at 8 characters and 87
   * ns at 36, the write 47 to 52 ns whatever the length up to there.
   */
  private writeString(key: string): number {
    const n = key.length;
    if (2 * n > this.scratchBytes) return 2 * n;
    if (n > LOOP_CHARACTERS) {
      this.text.write(key, LOCAL_LAYOUT.scratch, 'utf16le');
      return 2 * n;
    }
    const units = this.units;
    for (let i = 0, at = LOCAL_LAYOUT.scratch >> 1; i < n; i++) units[at + i] = key.charCodeAt(i);
    return 2 * n;
  }

  /**
   * A key that is not a number into the scratch area, if it fits (a shared engine has none):
   * its length in bytes, its tag in `scratchTag`. TypeError (the reference's) for what is not a
   * key.
   */
  private keyIn(key: Key): number {
    if (typeof key === 'string') {
      this.scratchTag = TAG_STRING;
      return this.writeString(key);
    }
    if (key instanceof Uint8Array) {
      this.scratchTag = TAG_BYTES;
      if (key.length <= this.scratchBytes) this.bytes.set(key, LOCAL_LAYOUT.scratch);
      return key.length;
    }
    if (typeof key === 'bigint') {
      this.scratchTag = TAG_BIGINT;
      return this.writeString(key.toString(16));
    }
    if (key instanceof AddressKey) {
      this.scratchTag = key.tag;
      return this.addressIn(key);
    }
    throw checkKey('key', key); // not a key: checkKey throws the reference's TypeError
  }

  /**
   * An address's 4 or 16 bytes into the scratch area, by a loop (a `set` costs more than the
   * copy at this size), if the engine has one; their length.
   */
  private addressIn(key: AddressKey): number {
    const bytes = key.bytes;
    if (bytes.length <= this.scratchBytes) this.copyIn(bytes, 0, bytes.length);
    return bytes.length;
  }

  /** Hashes `key` with the JS reference (a key the scratch area cannot take) into h1, h2. */
  private hashByReference(key: Key): void {
    const reference = this.reference;
    reference.hash(key);
    this.h1 = reference.h1;
    this.h2 = reference.h2;
  }

  private readHash(): void {
    this.h1 = this.words[0];
    this.h2 = this.words[1];
  }

  /** Hashes `key` into h1, h2 (KeyHasher's interface). */
  hash(key: Key): void {
    if (this.scratchBytes < 0 || typeof key === 'bigint') {
      this.hashByReference(key);
      return;
    }
    if (typeof key === 'number') {
      if (key - key !== 0) checkKey('key', key);
      this.exports.hashNumber(key);
      this.readHash();
      return;
    }
    if (key instanceof Uint8Array) this.hashBytes(key, 0, key.length);
    else this.hashBytesOf(this.keyIn(key), this.scratchTag, key);
  }

  /** Hashes `bytes[start..end)` as a byte key (KeyHasher's interface). */
  hashBytes(bytes: Uint8Array, start: number, end: number): void {
    const length = end - start;
    if (length > this.scratchBytes) {
      const reference = this.reference;
      reference.hashBytes(bytes, start, end);
      this.h1 = reference.h1;
      this.h2 = reference.h2;
      return;
    }
    this.copyIn(bytes, start, end);
    this.exports.hashBytes(this.scratch, length, TAG_BYTES);
    this.readHash();
  }

  /**
   * `bytes[start..end)` (at most the scratch area) into the scratch area. A loop, not
   * `set(subarray())`: lines of `hotcount top` are a few dozen bytes, and the subarray would be
   * an allocation per line (measured: the CLI 20% slower).
   */
  private copyIn(bytes: Uint8Array, start: number, end: number): void {
    const scratch = this.bytes;
    for (let i = start, at = LOCAL_LAYOUT.scratch; i < end; i++, at++) scratch[at] = bytes[i];
  }

  private hashBytesOf(length: number, tag: number, key: Key): void {
    if (length > this.scratchBytes) {
      this.hashByReference(key);
      return;
    }
    this.exports.hashBytes(this.scratch, length, tag);
    this.readHash();
  }

  /** Whether batches of int keys run in the engine (a local engine). */
  get batches(): boolean {
    return this.scratchBytes >= 0;
  }

  /**
   * keys[start..start+n) (n <= BATCH_KEYS), each counted with the sketch's rule by `delta`; each
   * key's estimate after its own update (as its single call would return it) into out[start..].
   */
  incrementMany(
    keys: Int32Array | Uint32Array,
    start: number,
    n: number,
    delta: number,
    out: Int32Array,
  ): void {
    this.incrementBatch(n, delta, this.loadBatch(keys, start, n));
    out.set(this.batch.subarray(0, n), start);
  }

  /** keys[start..start+n) (n <= BATCH_KEYS), each key's estimate into out[start..]. */
  estimateMany(keys: Int32Array | Uint32Array, start: number, n: number, out: Int32Array): void {
    this.exports.estimateMany(n, 0, this.loadBatch(keys, start, n));
    out.set(this.batch.subarray(0, n), start);
  }

  /** Copies the keys into the engine's batch; 1 if they are unsigned, else 0. */
  private loadBatch(keys: Int32Array | Uint32Array, start: number, n: number): number {
    if (keys instanceof Uint32Array) {
      this.batchUnsigned.set(keys.subarray(start, start + n));
      return 1;
    }
    this.batch.set(keys.subarray(start, start + n));
    return 0;
  }
}
