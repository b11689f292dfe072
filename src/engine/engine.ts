/**
 * hotcount's WebAssembly engine (built by tools/build-engine.mjs from generated WAT): the keyed
 * HalfSipHash-1-3 of src/hash/key-hasher.ts, bit for bit, run as WebAssembly. This first step
 * hashes; the update rules and the counters move in next, and the JS code stays as their
 * reference and as the fallback where WebAssembly is unavailable (`node --jitless`).
 *
 * The module is compiled once per process, synchronously, on first use; each hasher is an
 * instance of its own (its own key and memory).
 */
import {
  checkKey,
  type Key,
  TAG_BIGINT,
  TAG_BYTES,
  TAG_FLOAT,
  TAG_STRING,
} from '../hash/key-hasher.js';
import { ENGINE_BYTES } from './engine-bytes.js';

/** Where keys are written in the engine's memory (bytes 0-7 hold the result). */
const SCRATCH = 16;
const PAGE_BYTES = 65536;

interface EngineExports {
  memory: WebAssembly.Memory;
  setKey(k0: number, k1: number): void;
  hashInt32(key: number): void;
  hashBytes(ptr: number, len: number, tag: number): void;
}

let compiled: WebAssembly.Module | undefined;

/** Whether this process can run the engine (not under --jitless, where WebAssembly is absent). */
export function engineAvailable(): boolean {
  return typeof WebAssembly === 'object' && typeof WebAssembly.Module === 'function';
}

function engineModule(): WebAssembly.Module {
  if (compiled === undefined) {
    if (!engineAvailable()) throw new TypeError('WebAssembly is not available in this process');
    compiled = new WebAssembly.Module(Buffer.from(ENGINE_BYTES, 'base64'));
  }
  return compiled;
}

const f64 = new Float64Array(1);
const f64Bytes = new Uint8Array(f64.buffer);

/** The same interface as KeyHasher (results in `h1`, `h2`), hashed by the engine. */
export class WasmKeyHasher {
  h1 = 0;
  h2 = 0;
  private readonly engine: EngineExports;
  private bytes: Uint8Array;
  private units: Uint16Array;
  private words: Int32Array;

  /** `k0`, `k1`: the 64-bit key as two int32 words (see `hashKeyWords`). */
  constructor(k0: number, k1: number) {
    this.engine = new WebAssembly.Instance(engineModule()).exports as unknown as EngineExports;
    this.engine.setKey(k0 | 0, k1 | 0);
    const buffer = this.engine.memory.buffer;
    this.bytes = new Uint8Array(buffer);
    this.units = new Uint16Array(buffer);
    this.words = new Int32Array(buffer);
  }

  hash(key: Key): void {
    if (typeof key === 'number') {
      if ((key | 0) === key) {
        this.engine.hashInt32(key);
        this.read();
        return;
      }
      if (key - key !== 0) checkKey('key', key); // NaN, +-Infinity: the reference's TypeError
      f64[0] = key;
      this.room(8);
      this.bytes.set(f64Bytes, SCRATCH);
      this.run(8, TAG_FLOAT);
    } else if (typeof key === 'string') {
      this.hashString(key, TAG_STRING);
    } else if (key instanceof Uint8Array) {
      this.hashBytes(key, 0, key.length);
    } else if (typeof key === 'bigint') {
      this.hashString(key.toString(16), TAG_BIGINT);
    } else {
      checkKey('key', key); // not a key: the reference's TypeError
    }
  }

  hashBytes(bytes: Uint8Array, start: number, end: number): void {
    this.room(end - start);
    this.bytes.set(bytes.subarray(start, end), SCRATCH);
    this.run(end - start, TAG_BYTES);
  }

  /** A string is hashed as its UTF-16 code units, little-endian: two to a word. */
  private hashString(key: string, tag: number): void {
    const n = key.length;
    this.room(2 * n);
    const units = this.units;
    for (let i = 0, at = SCRATCH >> 1; i < n; i++) units[at + i] = key.charCodeAt(i);
    this.run(2 * n, tag);
  }

  private run(length: number, tag: number): void {
    this.engine.hashBytes(SCRATCH, length, tag);
    this.read();
  }

  private read(): void {
    this.h1 = this.words[0];
    this.h2 = this.words[1];
  }

  /** Grows the engine's memory until `length` bytes fit in the scratch area. */
  private room(length: number): void {
    const memory = this.engine.memory;
    if (SCRATCH + length <= memory.buffer.byteLength) return;
    memory.grow(Math.ceil((SCRATCH + length - memory.buffer.byteLength) / PAGE_BYTES));
    const buffer = memory.buffer;
    this.bytes = new Uint8Array(buffer);
    this.units = new Uint16Array(buffer);
    this.words = new Int32Array(buffer);
  }
}
