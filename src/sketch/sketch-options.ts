/**
 * What a sketch is made from and handed as: the options of `new CountMinSketch`, the engines, the
 * keys of the batch calls, the hasher other structures read a key's hash through, the handle a
 * worker attaches with, and the check of an amount that every count runs first.
 */
import { rangeError, typeError } from '../errors.js';
import type { Key } from '../hash/key-hasher.js';
import { AGING_OPTION_NAMES, type AgingHandle, type AgingOptions } from './aging.js';
import { SATURATED } from './counters.js';
import type { DimensionOptions } from './dimensions.js';

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

/** Fast check for an amount: an integer from 0 to 2^31 - 1; the slow path explains. */
export function checkAmount(by: number): void {
  if (typeof by === 'number' && (by & SATURATED) === by) return;
  if (typeof by !== 'number') throw typeError('by', 'a number', by);
  throw rangeError('by', 'an integer from 0 to 2^31 - 1', by);
}

/** The length of a batch call's keys; TypeError naming `keys` for anything else. */
export function batchLength(keys: Keys): number {
  if (keys instanceof Int32Array || keys instanceof Uint32Array || Array.isArray(keys)) {
    return keys.length;
  }
  throw typeError('keys', 'an Int32Array, a Uint32Array or an array of keys', keys);
}

/** `out` of a batch call, checked to hold `n` estimates. */
export function checkOut(out: Int32Array, n: number): Int32Array {
  if (!(out instanceof Int32Array)) throw typeError('out', 'an Int32Array', out);
  if (out.length < n) {
    throw new RangeError(
      `out must hold at least ${n} estimates (keys.length); it holds ${out.length}`,
    );
  }
  return out;
}
