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
 * The limits (src/limits) run the conservative rule with a floor and a ceiling (`raiseWithin`):
 * a rate limiter's admission test and update in one atomic step, GCRA's raise-only times.
 * Counts fade by `decay` and the half-lives (see `aging.ts`).
 *
 * Counters saturate instead of wrapping (see `counters.ts`). The rules below run over the
 * `Counters` seam, so local, shared and remote storage share them. With `shared: true` the
 * counters live in a SharedArrayBuffer (see `shared-counters.ts`): `handle` sends them to a
 * worker_thread, where `CountMinSketch.attach(handle)` is the same sketch over the same memory.
 */
import { ChunkHasher } from '../engine/chunk-hasher.js';
import {
  BATCH_KEYS,
  Engine,
  localEngineBytes,
  SHARED_CONSERVATIVE_DEPTH,
  WITHIN_DEPTH,
} from '../engine/engine.js';
import { engineAvailable, engineMemory } from '../engine/memory.js';
import { checkOptionNames, integerIn, rangeError, typeError } from '../errors.js';
import { checkKey, type Key, KeyHasher } from '../hash/key-hasher.js';
import {
  copySecret,
  hashKeyWords,
  randomSecret,
  sameBytes,
  secretFingerprint,
} from '../hash/secret.js';
import {
  AGING_OPTION_NAMES,
  Aging,
  type AgingHandle,
  type AgingOptions,
  SCALE_ONE,
  scaleOf,
} from './aging.js';
import { type Counters, LocalCounters, SATURATED, saturatingSum } from './counters.js';
import { type DimensionOptions, MAX_COUNTERS, resolveDimensions } from './dimensions.js';
import { decodeSketch, encodeSketch, readCells } from './format.js';
import { SharedCounters } from './shared-counters.js';

/**
 * Options of `new CountMinSketch`: its shape (width and depth, or epsilon and delta), the update
 * rule, the secret, shared memory, the engine, a half-life, folding. Any other name is a
 * TypeError; a bad value a TypeError or RangeError naming the option.
 */
export interface CountMinOptions extends DimensionOptions, AgingOptions {
  /** Conservative update (tighter estimates, no decrement). Default false. */
  conservative?: boolean;
  /** Hashing secret, at least 16 bytes. Default: 16 random bytes. Sketches to merge share it. */
  secret?: Uint8Array;
  /**
   * Counters in a SharedArrayBuffer, for worker_threads: send `handle` to a worker and
   * `CountMinSketch.attach` it there. Default false.
   */
  shared?: boolean;
  /**
   * Which code runs the updates: 'wasm', the WebAssembly engine (src/engine), or 'js', its
   * reference in JS. The same cells, estimates and bytes either way. Default 'wasm' where the
   * process has WebAssembly (not under `node --jitless`), else 'js'.
   */
  engine?: EngineName;
  /**
   * A shared sketch only (`shared: true`, or `attach`'s option): this object counts into a
   * private delta of its own and adds it to the shared cells once `foldEvery` (an integer from
   * 1 to 2^30) has been counted, or at `fold()`. Threads then stop handing the cells' cache
   * lines to one another on every update, at a price stated where it is paid: an estimate here
   * holds everything folded by every thread and everything this object counted, but not what
   * another thread has counted and not yet folded, so it can be low by up to foldEvery - 1 per
   * other thread. A plain sketch without a half-life only (RangeError otherwise), and increments
   * only (`decrement` throws a TypeError). Default: every update goes to the shared cells at once.
   */
  foldEvery?: number;
}

/** The engines a sketch can run on. */
export type EngineName = 'wasm' | 'js';

/** Keys for the batch calls: int32 or uint32 keys in a typed array (fastest), or any keys. */
export type Keys = Int32Array | Uint32Array | readonly Key[];

/** The hasher interface HeavyHitters reads a sketch's hash through (KeyHasher, Engine). */
export interface SketchHasher {
  h1: number;
  h2: number;
  hash(key: Key): void;
  hashBytes(bytes: Uint8Array, start: number, end: number): void;
}

/**
 * What another thread needs to attach to a shared sketch; structured-cloneable, so it can be
 * sent with `postMessage` or `workerData`. It holds the secret: keep it inside the process.
 */
export interface SketchHandle {
  /** The counters, header and total. */
  buffer: SharedArrayBuffer;
  /** The same bytes as a WebAssembly.Memory, for the engine (absent without WebAssembly). */
  memory?: WebAssembly.Memory;
  /** Counters per row. */
  width: number;
  /** Rows. */
  depth: number;
  /** The update rule (the sketch's only flag). */
  conservative: boolean;
  /** A copy of the hashing secret. */
  secret: Uint8Array;
  /** The shared half-life state, when the sketch ages (halfLife or halfLifeMs). */
  aging?: AgingHandle;
}

/** Every option `CountMinOptions` has; any other name is a TypeError (a typo, not a default). */
export const SKETCH_OPTION_NAMES: readonly string[] = [
  'width',
  'depth',
  'epsilon',
  'delta',
  'conservative',
  'secret',
  'shared',
  'engine',
  ...AGING_OPTION_NAMES,
];

/** 2^-32, to map a 32-bit hash onto [0, width) by multiplication. */
const INV_2_32 = 1 / 4294967296;

/**
 * floor(limit - p * weight): the most a key may reach in a window when the window before held
 * p, weighted (the sliding window's ceiling, with weight the part of that window still
 * counted). In doubles, as the engine computes it (tools/build-engine.mjs, windowSteps).
 */
export function weightedCeiling(limit: number, p: number, weight: number): number {
  return Math.floor(limit - p * weight);
}

/** Fast check for an amount: an integer from 0 to 2^31 - 1; the slow path explains. */
export function checkAmount(by: number): void {
  if (typeof by === 'number' && (by & SATURATED) === by) return;
  if (typeof by !== 'number') throw typeError('by', 'a number', by);
  throw rangeError('by', 'an integer from 0 to 2^31 - 1', by);
}

/**
 * The engine a sketch gets by default: the WebAssembly one wherever it can run this sketch
 * (WebAssembly in the process; for an attached handle, the memory as a WebAssembly.Memory; a
 * shared conservative sketch, at most SHARED_CONSERVATIVE_DEPTH rows), else the JS one.
 */
function defaultEngine(
  shared: boolean,
  conservative: boolean,
  depth: number,
  attach: { memory: unknown } | undefined,
): EngineName {
  if (!engineAvailable()) return 'js';
  if (attach !== undefined && attach.memory === undefined) return 'js';
  if (shared && conservative && depth > SHARED_CONSERVATIVE_DEPTH) return 'js';
  return 'wasm';
}

function noEngineMemory(): RangeError {
  return new RangeError(
    "engine 'wasm' could not get a WebAssembly.Memory: the process holds too many (each " +
      "reserves about 10 GiB of address space); use engine: 'js', or let go of other sketches",
  );
}

function batchLength(keys: Keys): number {
  if (keys instanceof Int32Array || keys instanceof Uint32Array || Array.isArray(keys)) {
    return keys.length;
  }
  throw typeError('keys', 'an Int32Array, a Uint32Array or an array of keys', keys);
}

function checkOut(out: Int32Array, n: number): Int32Array {
  if (!(out instanceof Int32Array)) throw typeError('out', 'an Int32Array', out);
  if (out.length < n) {
    throw new RangeError(
      `out must hold at least ${n} estimates (keys.length); it holds ${out.length}`,
    );
  }
  return out;
}

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
  /** The engine, where it runs raiseWithin (depth up to WITHIN_DEPTH), else null. */
  private readonly within: Engine | null;
  /** @internal What the last `stepWithin` read: the other sketch's estimate. */
  stepOther = 0;
  /** @internal What the last `stepWithin` read: the ceiling it tested against. */
  stepCeiling = 0;
  /** @internal */
  readonly counters: Counters;
  private readonly secretBytes: Uint8Array;
  private readonly fingerprint: Uint8Array;
  /** Scratch: the key's cell in each row, computed once per update. */
  private readonly rowCells: Int32Array;
  /** Scratch: what the conservative rule read in each row. */
  private readonly rowValues: Int32Array;
  /** The half-life, or null: a sketch that does not age pays one comparison per call. */
  private readonly aging: Aging | null;
  /**
   * With `foldEvery`: the private delta, a local sketch of this one's shape and secret, whose
   * hasher serves both (one hash per update); else null.
   */
  private readonly pending: CountMinSketch | null = null;
  /** What the delta may hold before it is folded; 0 without `foldEvery`. */
  readonly foldEvery: number = 0;
  /** What the delta holds (the amounts counted into it since the last fold). */
  private pendingAmount = 0;
  /** The shared clears seen: a clear by any thread makes the delta's counts forgotten too. */
  private clearsSeen = 0;

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
    const engine = options.engine ?? defaultEngine(shared, conservative, depth, attach);
    if (engine !== 'wasm' && engine !== 'js') {
      throw rangeError('engine', "'wasm' or 'js'", engine);
    }
    if (engine === 'wasm' && !engineAvailable()) {
      throw new RangeError(
        "engine 'wasm' is not available: this process has no WebAssembly (node --jitless?); " +
          "use engine: 'js'",
      );
    }
    if (engine === 'wasm' && shared && conservative && depth > SHARED_CONSERVATIVE_DEPTH) {
      throw new RangeError(
        `engine 'wasm' runs shared conservative sketches of depth up to ` +
          `${SHARED_CONSERVATIVE_DEPTH}; this one has depth ${depth}: use engine: 'js'`,
      );
    }
    let counters: Counters;
    let wasm: Engine | null = null;
    if (shared) {
      const sharedCounters =
        attach !== undefined
          ? SharedCounters.open(
              attach.name,
              attach.buffer,
              attach.memory,
              width,
              depth,
              conservative,
              this.fingerprint,
            )
          : SharedCounters.create(width, depth, conservative, this.fingerprint);
      const memory = sharedCounters.memory;
      if (engine === 'wasm' && memory === undefined && options.engine === 'wasm') {
        throw attach === undefined
          ? noEngineMemory()
          : new RangeError(
              "engine 'wasm' needs handle.memory: this handle's sketch was made without a " +
                "WebAssembly.Memory; attach it with engine: 'js'",
            );
      }
      if (engine === 'wasm' && memory !== undefined) {
        const word = sharedCounters.totalWord;
        wasm = Engine.shared(memory, k0, k1, width, depth, conservative, word);
      }
      counters = sharedCounters;
    } else if (engine === 'wasm' && placed !== undefined) {
      const { memory, origin, bytes } = placed;
      counters = new LocalCounters(width * depth, memory.buffer, origin, bytes);
      wasm = Engine.local(memory, origin, k0, k1, width, depth, conservative);
    } else if (engine === 'wasm') {
      const memory = engineMemory(localEngineBytes(width * depth), false);
      if (memory === undefined) {
        // No memory left for the engine (see engineMemory): the JS engine, unless asked for.
        if (options.engine === 'wasm') throw noEngineMemory();
        counters = new LocalCounters(width * depth);
      } else {
        counters = new LocalCounters(width * depth, memory.buffer);
        wasm = Engine.local(memory, 0, k0, k1, width, depth, conservative);
      }
    } else {
      counters = new LocalCounters(width * depth);
    }
    this.engine = wasm === null ? 'js' : 'wasm';
    this.wasm = wasm;
    this.within = wasm !== null && depth <= WITHIN_DEPTH ? wasm : null;
    this.counters = counters;
    this.hasher = wasm !== null && !shared ? wasm : new KeyHasher(k0, k1);
    this.rowCells = new Int32Array(depth);
    this.rowValues = new Int32Array(depth);
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
      this.pending = new CountMinSketch({
        width,
        depth,
        secret: this.secretBytes,
        engine: this.engine,
      });
      this.clearsSeen = counters.clears;
    }
  }

  /**
   * @internal `count` sketches made with `options` (one secret for all), whose counters share
   * one engine memory when they run on the local WebAssembly engine, so that one engine call
   * can read one of them and update another (`stepWithin`): the windows of a limit. Otherwise
   * (shared, the JS engine, no memory left for the engine), `count` sketches of their own.
   */
  static group(options: CountMinOptions, count: number): CountMinSketch[] {
    const secret = options.secret ?? randomSecret();
    const made = { ...options, secret };
    const make = () => Array.from({ length: count }, () => new CountMinSketch(made));
    if (options.shared === true || options.engine === 'js' || !engineAvailable()) return make();
    const first = new CountMinSketch(made); // validates the options, resolves the shape
    if (first.engine !== 'wasm' || first.aging !== null) return [first, ...make().slice(1)];
    const bytes = localEngineBytes(first.width * first.depth);
    const memory = engineMemory(bytes * count, false);
    if (memory === undefined) return [first, ...make().slice(1)];
    // Each sketch owns its part of the memory; the last also the rounding up to whole pages,
    // so that their memoryBytes add up to what was allocated.
    return Array.from({ length: count }, (_, i) => {
      const origin = i * bytes;
      const own = i === count - 1 ? memory.buffer.byteLength - origin : bytes;
      return new CountMinSketch(made, undefined, { memory, origin, bytes: own });
    });
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
    return this.incrementHash(hasher.h1, hasher.h2, by);
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
    return this.addHash(hasher.h1, hasher.h2, -by);
  }

  /** Never below the key's true count (strict turnstile); SATURATED reads "at least this". */
  estimate(key: Key): number {
    if (this.pending !== null) return this.countInDelta(key, -1);
    if (this.aging !== null) this.age(0);
    const wasm = this.wasm;
    if (wasm !== null) return wasm.estimate(key);
    const hasher = this.hasher;
    hasher.hash(key);
    return this.estimateHash(hasher.h1, hasher.h2);
  }

  /**
   * With `foldEvery`: adds `by` to the key in the delta (by -1: reads only) and returns the
   * delta's estimate plus the shared one. Never under what this object counted and every thread
   * folded: the delta's least cell holds at least this object's unfolded count of the key, the
   * shared cells' least at least the folded counts (increments only, so no cell holds less than
   * the counts hashed to it), and the two minima added are never above the least row sum.
   */
  private countInDelta(key: Key, by: number): number {
    const delta = this.pending as CountMinSketch;
    if (this.counters.clears !== this.clearsSeen) this.forget();
    const hasher = delta.hasher;
    hasher.hash(key);
    const h1 = hasher.h1;
    const h2 = hasher.h2;
    const own = by < 0 ? delta.estimateHash(h1, h2) : delta.incrementHash(h1, h2, by);
    const estimate = saturatingSum(own, this.estimateHash(h1, h2));
    if (by > 0) {
      this.pendingAmount += by;
      if (this.pendingAmount >= this.foldEvery) this.fold();
    }
    return estimate;
  }

  /**
   * With `foldEvery`: adds this object's delta to the shared cells and total now, so that every
   * thread's estimates hold it (call it before a worker ends: a delta not folded is lost with
   * its thread). Without `foldEvery`, nothing to do.
   */
  fold(): void {
    const delta = this.pending;
    if (delta === null) return;
    if (this.counters.clears !== this.clearsSeen) {
      this.forget(); // counted before a clear: nothing to fold
      return;
    }
    const counters = this.counters as SharedCounters;
    const total = delta.total;
    counters.foldFrom(delta.counters.cells);
    if (total !== 0) counters.addTotal(total);
    delta.clear();
    this.pendingAmount = 0;
  }

  /** A thread cleared the shared sketch: what the delta held was counted before, so it goes. */
  private forget(): void {
    (this.pending as CountMinSketch).clear();
    this.pendingAmount = 0;
    this.clearsSeen = this.counters.clears;
  }

  /** @internal Increment by hash, `by` already validated. */
  incrementHash(h1: number, h2: number, by: number): number {
    const wasm = this.wasm;
    if (wasm !== null) return wasm.incrementHash(h1, h2, by);
    return this.conservative ? this.raiseHash(h1, h2, by) : this.addHash(h1, h2, by);
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

  /** @internal Adds `by` to the total only: HeavyHitters counts a tracked key's event there. */
  countTotal(by: number): void {
    this.counters.addTotal(by);
  }

  /**
   * @internal Adds `amount` (>= 0, any size) to the cells of the key hashed to (h1, h2) by the
   * sketch's rule, and not to the total, which holds it already: HeavyHitters gives an evicted
   * key's exact count back to the sketch.
   */
  returnHash(h1: number, h2: number, amount: number): void {
    for (let left = amount; left > 0; ) {
      const part = Math.min(left, SATURATED);
      this.incrementHash(h1, h2, part);
      this.counters.addTotal(-part);
      left -= part;
    }
  }

  /**
   * @internal Adds a signed `delta` to the key hashed to (h1, h2) by the plain rule (a plain
   * sketch only): Inflight gives back what a guard acquired without hashing the key again.
   */
  addByHash(h1: number, h2: number, delta: number): number {
    const wasm = this.wasm;
    if (wasm !== null) return wasm.addHash(h1, h2, delta);
    return this.addHash(h1, h2, delta);
  }

  /** @internal Estimate by hash. */
  estimateHash(h1: number, h2: number): number {
    const wasm = this.wasm;
    if (wasm !== null) return wasm.estimateHash(h1, h2);
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

  /**
   * Conservative update: raise every row's cell to (estimate + by), saturating.
   *
   * Written so that it never underestimates when threads update one key at once (shared
   * storage). The obvious rule does: two threads both read the estimate m and both raise the
   * cells to m + by, so the key gains by instead of 2 by. Here an attempt reads every cell
   * (s_i, least m, target t = m + by), then sets each cell below t with a compare-and-set from
   * s_i, and starts over if any of them fails. Cells of a conservative sketch only grow (no
   * decrement; merge adds), so a set that succeeds means its cell held s_i from the read to the
   * set. Call an attempt's span the time from its last read to its first set: throughout it,
   * the cells it sets hold their s_i (< t) and the others hold >= t. For two successful attempts
   * A and B of one key, [m_A, t_A) and [m_B, t_B) are disjoint:
   * - If the spans overlap: A's least cell j holds m_A there. B cannot set j too (whichever set
   *   came first would change j inside the other's read-to-set interval), so B skipped it,
   *   having read >= t_B: m_A >= t_B.
   * - If A's span ends before B's begins: B's least cell k held m_B from B's read of it to B's
   *   set, which comes after all of A's reads. Had A set k, it did so before B read it (later
   *   falls inside one of the read-to-set intervals), so m_B >= t_A. Had A skipped k, it read
   *   >= t_A there, and B read that value or a later one: m_B >= t_A.
   * So a key's successful updates, ordered by m, each start at or above the previous one's t;
   * the last t is at least the sum of their amounts, and every cell ends at least there.
   * Lock-free: a failed set means another thread's succeeded. (In one thread the sets never
   * fail; LocalCounters.raiseFrom does not even compare.)
   */
  private raiseHash(h1: number, h2: number, by: number): number {
    return this.raiseWithin(h1, h2, -SATURATED, by, SATURATED);
  }

  /**
   * @internal The conservative rule with a floor and a ceiling, for the limits built on the
   * sketch (src/limits): raises the key's cells to target = max(estimate, floor) + by
   * (saturating), unless target > ceiling, in which case nothing is written; returns target
   * either way. `raiseHash` is the case floor = -SATURATED, ceiling = SATURATED. The argument
   * above holds unchanged (it never looks at how the target is computed from what was read),
   * so in shared storage each key's successful updates, in order, each start at or above the
   * previous one's target: an admission decided on a read that another thread made stale is
   * retried, never granted twice. `by` >= 0 and floor, ceiling within +-SATURATED.
   */
  raiseWithin(h1: number, h2: number, floor: number, by: number, ceiling: number): number {
    const within = this.within;
    if (within !== null) return within.raiseWithin(h1, h2, floor, by, ceiling);
    const counters = this.counters;
    const width = this.width;
    const depth = this.depth;
    const rowCells = this.rowCells;
    const rowValues = this.rowValues;
    for (let row = 0, offset = 0; row < depth; row++, offset += width) {
      const g = (h1 + Math.imul(row, h2)) >>> 0;
      rowCells[row] = offset + ((g * width * INV_2_32) | 0);
    }
    for (;;) {
      let estimate = SATURATED;
      for (let row = 0; row < depth; row++) {
        const value = counters.load(rowCells[row]);
        rowValues[row] = value;
        if (value < estimate) estimate = value;
      }
      const base = Math.max(estimate, floor);
      const target = base >= SATURATED - by ? SATURATED : base + by;
      if (target > ceiling) return target;
      let row = 0;
      while (
        row < depth &&
        (rowValues[row] >= target || counters.raiseFrom(rowCells[row], rowValues[row], target))
      ) {
        row++;
      }
      if (row === depth) {
        counters.addTotal(by);
        return target;
      }
    }
  }

  /**
   * @internal A limit's step over two sketches of one group (see `group`; the windows of
   * src/limits): p = the key's estimate in `other` (0 for null), lo = max(floor, p +
   * floorOffset), hi = floor(limit - p * weight); then on this sketch raiseWithin(lo, by, hi),
   * or for by = 0, max(estimate, lo) without writing. Returns that; leaves p and hi in
   * `stepOther` and `stepCeiling`. One engine call when both sketches share its memory.
   */
  stepWithin(
    key: Key,
    other: CountMinSketch | null,
    floor: number,
    floorOffset: number,
    limit: number,
    weight: number,
    by: number,
  ): number {
    const within = this.within;
    const otherEngine = other === null ? null : other.within;
    // A local engine (it has the scratch area), and the other sketch in its memory or none.
    if (within?.batches && (other === null || otherEngine?.memory === within.memory)) {
      const cells = otherEngine === null ? -1 : otherEngine.cellsAddress;
      const result = within.step(key, cells, floor, floorOffset, limit, weight, by);
      this.stepOther = within.stepOther;
      this.stepCeiling = within.stepCeiling;
      return result;
    }
    const hasher = this.hasher;
    hasher.hash(key);
    const { h1, h2 } = hasher;
    const p = other === null ? 0 : other.estimateHash(h1, h2);
    return this.stepHash(h1, h2, p, floor, floorOffset, limit, weight, by);
  }

  /**
   * @internal stepWithin's rule by hash, with the other sketch's estimate `p` read by the
   * caller (shared windows check that read before they use it): the reference the engine's
   * one-call step is tested against.
   */
  stepHash(
    h1: number,
    h2: number,
    p: number,
    floor: number,
    floorOffset: number,
    limit: number,
    weight: number,
    by: number,
  ): number {
    const lo = Math.max(floor, p + floorOffset);
    const hi = weightedCeiling(limit, p, weight);
    this.stepOther = p;
    this.stepCeiling = hi;
    if (by === 0) return Math.max(this.estimateHash(h1, h2), lo);
    return this.raiseWithin(h1, h2, lo, by, hi);
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
        wasm.many(typed, start, count, by, estimateOnly, results);
      }
      return results;
    }
    if (Array.isArray(keys)) for (let i = 0; i < n; i++) checkKey(`keys[${i}]`, keys[i]);
    if (this.pending !== null) {
      for (let i = 0; i < n; i++) results[i] = this.countInDelta(keys[i], estimateOnly ? -1 : by);
      return results;
    }
    const hasher = this.hasher;
    for (let i = 0; i < n; i++) {
      hasher.hash(keys[i]);
      results[i] = estimateOnly
        ? this.estimateHash(hasher.h1, hasher.h2)
        : this.incrementHash(hasher.h1, hasher.h2, by);
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
    this.pending?.counters.scale(scale);
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
    if (this.counters.clears !== this.clearsSeen) this.forget();
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
    if (this.pending !== null) this.forget();
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
