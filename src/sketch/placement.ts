/**
 * Where a sketch's counters live and which engine runs them: local memory of its own, a part
 * of a group's engine memory (`placed`, the windows of a limit), or shared memory (new, or a
 * handle's, `attach`); the WebAssembly engine over that memory wherever it can run the sketch,
 * else the JS reference. Chosen once, when the sketch is made (count-min.ts).
 */
import { Engine, localEngineBytes, SHARED_CONSERVATIVE_DEPTH } from '../engine/engine.js';
import { engineAvailable, engineMemory } from '../engine/memory.js';
import { rangeError } from '../errors.js';
import { type Counters, LocalCounters } from './counters.js';
import { SharedCounters } from './shared-counters.js';
import type { EngineName } from './sketch-options.js';

/** What a sketch asks of its placement. */
export interface PlacementRequest {
  width: number;
  depth: number;
  conservative: boolean;
  shared: boolean;
  /** The secret's fingerprint, which shared memory keeps and checks. */
  fingerprint: Uint8Array;
  /** The secret's key words, for the engine's hash. */
  keyWords: readonly [number, number];
  /** The engine the options ask for, if they do. */
  asked: EngineName | undefined;
  /** A handle's memory to attach to (shared). */
  attach?: { name: string; buffer: unknown; memory: unknown };
  /** The part of a group's engine memory to use (see CountMinSketch.group). */
  placed?: { memory: WebAssembly.Memory; origin: number; bytes: number };
}

/** The counters and the engine over them (null: the JS reference runs them). */
export interface Placement {
  counters: Counters;
  engine: Engine | null;
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

/**
 * The counters and engine of `request`. RangeError for an engine that is not one, or 'wasm'
 * asked where it cannot run this sketch.
 */
export function placeCounters(request: PlacementRequest): Placement {
  const { width, depth, conservative, shared, asked, attach, placed } = request;
  const engine = asked ?? defaultEngine(shared, conservative, depth, attach);
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
  if (shared) {
    const counters =
      attach !== undefined
        ? SharedCounters.open(attach.name, attach.buffer, attach.memory, request)
        : SharedCounters.create(request);
    const memory = counters.memory;
    if (engine === 'wasm' && memory === undefined && asked === 'wasm') {
      throw attach === undefined
        ? noEngineMemory()
        : new RangeError(
            "engine 'wasm' needs handle.memory: this handle's sketch was made without a " +
              "WebAssembly.Memory; attach it with engine: 'js'",
          );
    }
    if (engine !== 'wasm' || memory === undefined) return { counters, engine: null };
    const word = counters.totalWord;
    return { counters, engine: Engine.shared(memory, word, request) };
  }
  if (engine === 'wasm' && placed !== undefined) {
    const { memory, origin, bytes } = placed;
    return {
      counters: new LocalCounters(width * depth, memory.buffer, origin, bytes),
      engine: Engine.local(memory, origin, request),
    };
  }
  if (engine === 'wasm') {
    const memory = engineMemory(localEngineBytes(width * depth), false);
    if (memory !== undefined) {
      return {
        counters: new LocalCounters(width * depth, memory.buffer),
        engine: Engine.local(memory, 0, request),
      };
    }
    // No memory left for the engine (see engineMemory): the JS engine, unless asked for.
    if (asked === 'wasm') throw noEngineMemory();
  }
  return { counters: new LocalCounters(width * depth), engine: null };
}

/**
 * One engine memory for `count` local sketches of `counters` cells each (a group, see
 * CountMinSketch.group), as each one's part; undefined when no memory is left for it. Each owns
 * its part; the last also the rounding up to whole pages, so that their memoryBytes add up to
 * what was allocated.
 */
export function groupMemory(
  counters: number,
  count: number,
): { memory: WebAssembly.Memory; origin: number; bytes: number }[] | undefined {
  const bytes = localEngineBytes(counters);
  const memory = engineMemory(bytes * count, false);
  if (memory === undefined) return undefined;
  return Array.from({ length: count }, (_, i) => {
    const origin = i * bytes;
    const own = i === count - 1 ? memory.buffer.byteLength - origin : bytes;
    return { memory, origin, bytes: own };
  });
}
