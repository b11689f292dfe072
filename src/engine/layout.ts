/**
 * Where the WebAssembly engine finds a sketch's state in its memory: byte offsets that the
 * engine's modules (tools/build-engine.mjs lays them out the same way; engine.ts checks the two
 * agree at load) and the counters that view the same memory (sketch/counters.ts,
 * sketch/shared-counters.ts) all read from here, so that the engine, below the sketch, imports
 * nothing from it.
 */

/**
 * A local sketch, from its origin (0 unless sketches share the memory): the last hash (0-7), the
 * saturated flag (8), the volume (12), the total as an f64 (16), what the engine's line hashing
 * reports (24, 28: see chunk-hasher.ts), what a window step read (32, 36: see
 * CountMinSketch.stepWithin), the engine's scratch area for keys and batches (from `scratch`),
 * the cells (from `cells`).
 */
export const LOCAL_LAYOUT = {
  saturated: 8,
  volume: 12,
  total: 16,
  consumed: 24,
  emptyLines: 28,
  stepOther: 32,
  stepCeiling: 36,
  scratch: 64,
  batch: 8192,
  cells: 16384,
} as const;

/**
 * A shared sketch's SharedArrayBuffer (its header is described in sketch/shared-counters.ts):
 * the saturated flag (header word 5), the count of total words claimed (word 7), the total's
 * overflow (a BigInt64 at 48), the total's words (from `words`, 1024 of them) and the cells
 * (from `cells`).
 */
export const SHARED_LAYOUT = {
  saturated: 20,
  claimed: 28,
  overflow: 48,
  words: 64,
  cells: 64 + 1024 * 4,
} as const;
