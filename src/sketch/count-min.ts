/**
 * A Count-Min sketch with keyed hashing, signed saturating counters and optional conservative
 * update.
 *
 * Layout. `depth` rows of `width` 32-bit counters, row after row in one Int32Array (so the
 * memory is exactly 4 * width * depth bytes, whatever the number of keys). A key is hashed once,
 * with a keyed 64-bit PRF (see `hash/key-hasher.ts`), into two 32-bit halves h1 and h2, which
 * give its column in every row (columns.ts: why two hashes serve every row, and multiply-shift).
 *
 * Guarantee (Cormode & Muthukrishnan 2005, Theorem 1). For every key whose true count never goes
 * negative (the strict turnstile model), the estimate (the minimum over its d cells) is never
 * below the true count, and exceeds it by more than epsilon * N with probability at most delta,
 * where epsilon = e / width, delta = e^-depth and N is the net total of updates. `errorBound`
 * is that epsilon * N.
 *
 * Conservative update (Estan & Varghese, SIGCOMM 2002; kernel.ts has the rule, and the limits'
 * form of it with a floor and a ceiling): tighter estimates, still never low, no decrement.
 * Counts fade by `decay` and the half-lives (see `aging.ts`).
 *
 * Counters saturate instead of wrapping (see `counters.ts`). The rules (kernel.ts) run over the
 * `Counters` seam, so local and shared storage share them. With `shared: true` the
 * counters live in a SharedArrayBuffer (see `shared-counters.ts`): `handle` sends them to a
 * worker_thread, where `CountMinSketch.attach(handle)` is the same sketch over the same memory.
 */
import { ChunkHasher } from '../engine/chunk-hasher.js';
import { BATCH_KEYS, type Engine, WITHIN_DEPTH } from '../engine/engine.js';
import { engineAvailable } from '../engine/memory.js';
import { checkOptionNames, integerIn, typeError } from '../errors.js';
import { checkKey, type Key, KeyHasher } from '../hash/key-hasher.js';
import {
  copySecret,
  hashKeyWords,
  randomSecret,
  sameBytes,
  secretFingerprint,
} from '../hash/secret.js';
import { Aging, type AgingHandle, SCALE_ONE, scaleOf } from './aging.js';
import { type Counters, SATURATED } from './counters.js';
import { MAX_COUNTERS, resolveDimensions } from './dimensions.js';
import { FoldDelta } from './fold-delta.js';
import { decodeSketch, encodeSketch, readCells } from './format.js';
import { SketchKernel } from './kernel.js';
import { groupMemory, placeCounters } from './placement.js';
import { SharedCounters } from './shared-counters.js';
import {
  batchLength,
  type CountMinOptions,
  checkAmount,
  checkOut,
  type EngineName,
  type Keys,
  SKETCH_OPTION_NAMES,
  type SketchHandle,
  type SketchHasher,
} from './sketch-options.js';

/**
 * A Count-Min sketch with keyed hashing, signed saturating counters and optional conservative
 * update: a key's estimate is never below its true count (strict turnstile) and above it by more
 * than `errorBound` with probability at most `delta`, in 4 * width * depth bytes of counters
 * whatever the number of keys. `shared: true` puts the counters in shared memory for
 * worker_threads. (The file's top comment has the layout and the proofs' sources.)
 */
export class CountMinSketch {
  /** Counters per row. */
  readonly width: number;
  /** Rows. */
  readonly depth: number;
  /** Whether this sketch uses conservative update. */
  readonly conservative: boolean;
  /** Whether the counters are in shared memory (`shared: true` or `attach`). */
  readonly shared: boolean;
  /** Which code runs the updates: 'wasm' (the WebAssembly engine) or 'js' (its reference). */
  readonly engine: EngineName;
  /** @internal The keyed hasher; HeavyHitters reuses its output to avoid hashing twice. */
  readonly hasher: SketchHasher;
  /** The WebAssembly engine, or null for the JS one. */
  private readonly wasm: Engine | null;
  /** The engine, where it runs a limit's window step (depth up to WITHIN_DEPTH), else null. */
  private readonly within: Engine | null;
  /** @internal */
  readonly counters: Counters;
  /** @internal The operations by hash (kernel.ts), on the engine or in JS. */
  readonly kernel: SketchKernel;
  private readonly secretBytes: Uint8Array;
  private readonly fingerprint: Uint8Array;
  /** The half-life, or null: a sketch that does not age pays one comparison per call. */
  private readonly aging: Aging | null;
  /** With `foldEvery`: the private delta (fold-delta.ts); else null. */
  private readonly pending: FoldDelta | null = null;
  /** What the delta may hold before it is folded; 0 without `foldEvery`. */
  readonly foldEvery: number = 0;

  /**
   * `attach` is for `handle`: the memory to use instead of new counters; `placed`, for `group`:
   * where in a memory the sketches of a group share this one's counters lie. @internal
   */
  constructor(
    options: CountMinOptions = {},
    attach?: { name: string; buffer: unknown; memory: unknown; aging?: AgingHandle },
    placed?: { memory: WebAssembly.Memory; origin: number; bytes: number },
  ) {
    if (options === null || typeof options !== 'object') {
      throw typeError('options', 'an object', options);
    }
    checkOptionNames('options', options, [...SKETCH_OPTION_NAMES, 'foldEvery']);
    const { width, depth } = resolveDimensions(options);
    const conservative = options.conservative ?? false;
    if (typeof conservative !== 'boolean') {
      throw typeError('conservative', 'a boolean', conservative);
    }
    const shared = attach !== undefined || (options.shared ?? false);
    if (typeof shared !== 'boolean') throw typeError('shared', 'a boolean', shared);
    this.width = width;
    this.depth = depth;
    this.conservative = conservative;
    this.shared = shared;
    this.secretBytes =
      options.secret === undefined ? randomSecret() : copySecret(options.secret, 'secret');
    this.fingerprint = secretFingerprint(this.secretBytes);
    const [k0, k1] = hashKeyWords(this.secretBytes);
    const { counters, engine: wasm } = placeCounters({
      width,
      depth,
      conservative,
      shared,
      fingerprint: this.fingerprint,
      keyWords: [k0, k1],
      asked: options.engine,
      attach,
      placed,
    });
    this.engine = wasm === null ? 'js' : 'wasm';
    this.wasm = wasm;
    this.within = wasm !== null && depth <= WITHIN_DEPTH ? wasm : null;
    this.counters = counters;
    this.kernel = new SketchKernel(counters, this, wasm, this.within !== null);
    this.hasher = wasm !== null && !shared ? wasm : new KeyHasher(k0, k1);
    this.aging =
      attach?.aging !== undefined
        ? Aging.attach(attach.aging, options.now)
        : Aging.from(options, shared);
    if (options.foldEvery !== undefined) {
      this.foldEvery = integerIn('foldEvery', options.foldEvery, 1, 2 ** 30);
      if (!shared || conservative || this.aging !== null) {
        throw new RangeError(
          'foldEvery is for a shared plain sketch without a half-life: folding a delta into ' +
            'cells that age, or that other threads raise conservatively, could leave a key below ' +
            'its count',
        );
      }
      this.pending = new FoldDelta(this.foldEvery, counters as SharedCounters, {
        width,
        depth,
        keyWords: [k0, k1],
        fingerprint: this.fingerprint,
        engine: this.engine,
      });
    }
  }

  /**
   * @internal `count` sketches made with `options` (one secret for all), whose counters share
   * one engine memory when they run on the local WebAssembly engine, so that one engine call
   * can read one of them and update another (`engineStep`): the windows of a limit. Otherwise
   * (shared, the JS engine, no memory left for the engine), `count` sketches of their own.
   */
  static group(options: CountMinOptions, count: number): CountMinSketch[] {
    const secret = options.secret ?? randomSecret();
    const made = { ...options, secret };
    const make = () => Array.from({ length: count }, () => new CountMinSketch(made));
    if (options.shared === true || options.engine === 'js' || !engineAvailable()) return make();
    const first = new CountMinSketch(made); // validates the options, resolves the shape
    if (first.engine !== 'wasm' || first.aging !== null) return [first, ...make().slice(1)];
    const parts = groupMemory(first.width * first.depth, count);
    if (parts === undefined) return [first, ...make().slice(1)];
    return parts.map((placed) => new CountMinSketch(made, undefined, placed));
  }

  /**
   * The same sketch as the one `handle` came from, over the same shared memory, in this thread.
   * TypeError for a handle that is not one (a plain ArrayBuffer, a missing field), RangeError
   * for one whose buffer does not hold what it says (size, dimensions, rule, secret).
   */
  static attach(
    handle: SketchHandle,
    options: { engine?: EngineName; now?: () => number; foldEvery?: number } = {},
  ): CountMinSketch {
    if (handle === null || typeof handle !== 'object') {
      throw typeError('handle', "a shared sketch's handle", handle);
    }
    const width = integerIn('handle.width', handle.width, 1, MAX_COUNTERS);
    const depth = integerIn('handle.depth', handle.depth, 1, MAX_COUNTERS);
    if (width * depth > MAX_COUNTERS) {
      throw new RangeError(`handle.width x handle.depth must be at most 2^28 counters`);
    }
    if (typeof handle.conservative !== 'boolean') {
      throw typeError('handle.conservative', 'a boolean', handle.conservative);
    }
    if (options === null || typeof options !== 'object') {
      throw typeError('options', 'an object', options);
    }
    checkOptionNames('options', options, ['engine', 'now', 'foldEvery']);
    const engine = options.engine;
    return new CountMinSketch(
      {
        width,
        depth,
        conservative: handle.conservative,
        secret: copySecret(handle.secret, 'handle.secret'),
        engine,
        ...(handle.aging === undefined ? {} : { now: options.now }),
        ...(options.foldEvery === undefined ? {} : { foldEvery: options.foldEvery }),
      },
      { name: 'handle.buffer', buffer: handle.buffer, memory: handle.memory, aging: handle.aging },
    );
  }

  /** What a worker_thread needs to `attach` this sketch. TypeError unless it is shared. */
  get handle(): SketchHandle {
    if (!(this.counters instanceof SharedCounters)) {
      throw new TypeError('handle is only defined on a sketch created with shared: true');
    }
    const memory = this.counters.memory;
    const aging = this.aging?.handle;
    return {
      buffer: this.counters.buffer,
      ...(memory === undefined ? {} : { memory }),
      width: this.width,
      depth: this.depth,
      conservative: this.conservative,
      secret: this.secret,
      ...(aging === undefined ? {} : { aging }),
    };
  }

  /** Adds `by` (default 1) to `key`; returns the key's estimate after the update. */
  increment(key: Key, by = 1): number {
    checkAmount(by);
    if (this.pending !== null) return this.countInDelta(key, by);
    if (this.aging !== null) this.age(by);
    const wasm = this.wasm;
    if (wasm !== null) return wasm.increment(key, by);
    const hasher = this.hasher;
    hasher.hash(key);
    return this.kernel.increment(hasher.h1, hasher.h2, by);
  }

  /**
   * Subtracts `by` (default 1) from `key`; returns the key's estimate after the update.
   * Estimates stay upper bounds only while no key's true count goes below zero.
   * TypeError on a conservative sketch.
   */
  decrement(key: Key, by = 1): number {
    if (this.pending !== null) {
      throw new TypeError(
        'decrement is not defined on a sketch with foldEvery: a thread that takes back what ' +
          'another counted could leave a key below its count until both folded',
      );
    }
    if (this.conservative) {
      throw new TypeError(
        'decrement is not defined on a conservative sketch: conservative update cannot undo an ' +
          'increment; create the sketch with conservative: false to count both ways',
      );
    }
    checkAmount(by);
    if (this.aging !== null) this.age(0);
    const wasm = this.wasm;
    if (wasm !== null) return wasm.add(key, -by);
    const hasher = this.hasher;
    hasher.hash(key);
    return this.kernel.add(hasher.h1, hasher.h2, -by);
  }

  /** Never below the key's true count (strict turnstile); SATURATED reads "at least this". */
  estimate(key: Key): number {
    if (this.pending !== null) return this.countInDelta(key, -1);
    if (this.aging !== null) this.age(0);
    const wasm = this.wasm;
    if (wasm !== null) return wasm.estimate(key);
    const hasher = this.hasher;
    hasher.hash(key);
    return this.kernel.estimate(hasher.h1, hasher.h2);
  }

  /** With `foldEvery`: counts (by -1: reads) `key` in the delta; the estimate (fold-delta.ts). */
  private countInDelta(key: Key, by: number): number {
    return (this.pending as FoldDelta).count(key, by, this.kernel);
  }

  /**
   * With `foldEvery`: adds this object's delta to the shared cells and total now, so that every
   * thread's estimates hold it (call it before a worker ends: a delta not folded is lost with
   * its thread). Without `foldEvery`, nothing to do.
   */
  fold(): void {
    this.pending?.fold();
  }

  /**
   * @internal A hasher for byte keys in chunks of up to `capacity` bytes, keyed as this
   * sketch (see chunk-hasher.ts); undefined where the engine cannot run.
   */
  chunkHasher(capacity: number): ChunkHasher | undefined {
    if (!engineAvailable()) return undefined;
    const [k0, k1] = hashKeyWords(this.secretBytes);
    return ChunkHasher.create(k0, k1, capacity);
  }

  /**
   * @internal Where a limit's window step (limits/window-step.ts) can run in one engine call
   * over these sketches of one `group`: a view of the step's slots in their engine's memory;
   * undefined unless all run on one local engine's memory (the step then runs there, else by
   * hash in JS).
   */
  static stepSlots(group: readonly CountMinSketch[]): Float64Array | undefined {
    const engine = group[0].within;
    if (engine === null || !engine.batches) return undefined;
    for (const sketch of group) if (sketch.within?.memory !== engine.memory) return undefined;
    return engine.stepSlots();
  }

  /**
   * @internal The window step whose slots are at byte `step` (from `stepSlots`, for this
   * sketch's group), on this sketch for `key`, with `other`'s estimate as the previous count
   * (none for null): one engine call, hash included. Returns what the step found.
   */
  engineStep(key: Key, other: CountMinSketch | null, step: number): number {
    const cells = other === null ? -1 : (other.within as Engine).cellsAddress;
    return (this.within as Engine).step(key, cells, step);
  }

  /**
   * Adds `by` (default 1) to each key of `keys`, in order, and returns each key's estimate after
   * its own update (what `increment` would return, call by call), in `out` if given. Int32Array
   * and Uint32Array keys run in the engine four at a time; an array may hold any keys, all
   * validated before anything is counted. RangeError if `out` is shorter than `keys`.
   */
  incrementMany(keys: Keys, by = 1, out?: Int32Array): Int32Array {
    checkAmount(by);
    if (this.aging !== null) this.age(batchLength(keys) * by);
    return this.many(keys, by, false, out);
  }

  /** Each key's estimate, in `out` if given: what `estimate` returns, key by key. */
  estimateMany(keys: Keys, out?: Int32Array): Int32Array {
    return this.many(keys, 0, true, out);
  }

  private many(keys: Keys, by: number, estimateOnly: boolean, out?: Int32Array): Int32Array {
    const n = batchLength(keys);
    const results = out === undefined ? new Int32Array(n) : checkOut(out, n);
    const wasm = this.wasm;
    if (!Array.isArray(keys) && wasm !== null && wasm.batches && this.pending === null) {
      const typed = keys as Int32Array | Uint32Array;
      for (let start = 0; start < n; start += BATCH_KEYS) {
        const count = Math.min(BATCH_KEYS, n - start);
        if (estimateOnly) wasm.estimateMany(typed, start, count, results);
        else wasm.incrementMany(typed, start, count, by, results);
      }
      return results;
    }
    if (Array.isArray(keys)) for (let i = 0; i < n; i++) checkKey(`keys[${i}]`, keys[i]);
    if (this.pending !== null) {
      for (let i = 0; i < n; i++) results[i] = this.countInDelta(keys[i], estimateOnly ? -1 : by);
      return results;
    }
    const hasher = this.hasher;
    const kernel = this.kernel;
    for (let i = 0; i < n; i++) {
      hasher.hash(keys[i]);
      results[i] = estimateOnly
        ? kernel.estimate(hasher.h1, hasher.h2)
        : kernel.increment(hasher.h1, hasher.h2, by);
    }
    return results;
  }

  /**
   * Multiplies every counter by `factor` (default 0.5) and the total likewise: counts fade
   * (see aging.ts). `factor` is taken to 20 binary places, rounded down; each cell is rounded
   * down, the total up; saturated cells stay saturated. An estimate then never falls below the
   * key's count decayed the same way. RangeError for a factor outside [0, 1].
   */
  decay(factor = 0.5): void {
    const scale = scaleOf(factor);
    this.counters.scale(scale);
    this.pending?.scale(scale);
  }

  /** Applies the halvings due (the half-life's), counting `events` more. */
  private age(events: number): void {
    const halvings = (this.aging as Aging).due(events);
    if (halvings > 0) this.counters.scale(halvings > 20 ? 0 : SCALE_ONE >> halvings);
  }

  /** Net sum of all updates (N); with `foldEvery`, those folded and this object's. */
  get total(): number {
    const delta = this.pending;
    if (delta === null) return this.counters.total;
    return this.counters.total + delta.total;
  }

  /** epsilon * max(N, 0): under strict turnstile, estimate - true <= errorBound w.p. 1 - delta. */
  get errorBound(): number {
    return this.epsilon * Math.max(this.total, 0);
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
    return this.counters.saturated || (this.pending?.saturated ?? false);
  }

  /**
   * Bytes of counter storage, as allocated: 4 * width * depth for the JS engine; with the
   * WebAssembly engine, its memory in whole 64 KiB pages (the cells, 16 KiB of state and
   * scratch, rounded up); a shared sketch adds 4,160 bytes of header and total to the cells,
   * in whole pages wherever the process has WebAssembly.
   */
  get memoryBytes(): number {
    return this.counters.memoryBytes + (this.pending?.memoryBytes ?? 0);
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
   *
   * Shared sketches, while other threads update them: each cell is added atomically, so no
   * update is lost either way. Into a plain sketch the result is still exact. Into a
   * conservative sketch, merge when no thread updates it (before the workers start, or after):
   * a conservative update that runs during the merge can see some of the key's cells merged and
   * others not, skip raising the merged ones, and leave the key below its two counts added.
   * Reading from a shared `other` copies each of its cells once (as `toBytes` does).
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
    other.fold(); // its delta too, so that the merge adds all that it counted
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

  /**
   * Forgets everything counted. On a shared sketch, for every thread; an update that runs
   * during the clear may be kept whole, in some rows or the total only, or not at all, and an
   * update that starts after it returns is counted as on a new sketch.
   */
  clear(): void {
    this.counters.clear();
    this.pending?.forget();
  }

  /**
   * The versioned, authenticated binary form (see docs/sketch.md, "Binary format"). Of a shared sketch
   * that other threads update meanwhile: each cell is copied once, so the copy holds every
   * update that completed before the call, and the total, read after the cells, is at least
   * theirs (so `errorBound` of the copy covers them).
   */
  toBytes(): Uint8Array {
    this.fold(); // with foldEvery: this object's delta, so that the copy holds what it counted
    const counters = this.counters;
    const cells = this.shared ? counters.cells.slice() : counters.cells;
    return encodeSketch(
      {
        width: this.width,
        depth: this.depth,
        conservative: this.conservative,
        saturated: counters.saturated,
        total: counters.total,
        fingerprint: this.fingerprint,
      },
      cells,
      this.secretBytes,
    );
  }

  /**
   * Reads a sketch written by `toBytes`. RangeError for another secret, another version, a bad
   * checksum or a malformed blob; nothing is allocated before the blob's length is validated.
   */
  static fromBytes(
    bytes: Uint8Array,
    options: { secret: Uint8Array; shared?: boolean; engine?: EngineName },
  ): CountMinSketch {
    if (options === null || typeof options !== 'object') {
      throw typeError('options', 'an object with a secret', options);
    }
    checkOptionNames('options', options, ['secret', 'shared', 'engine']);
    const secret = copySecret(options.secret, 'secret');
    const header = decodeSketch(bytes, secret, secretFingerprint(secret));
    const sketch = new CountMinSketch({
      width: header.width,
      depth: header.depth,
      conservative: header.conservative,
      secret,
      shared: options.shared ?? false,
      engine: options.engine,
    });
    const counters = sketch.counters;
    readCells(bytes, counters.cells);
    counters.restore(header.total);
    return sketch;
  }
}
