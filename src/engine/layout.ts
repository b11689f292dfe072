/**
 * Where the WebAssembly engine finds a sketch's state in its memory: byte offsets that the
 * engine's modules and the counters that view the same memory (sketch/counters.ts,
 * sketch/shared-counters.ts) all read from here, so that the engine, below the sketch, imports
 * nothing from it. The engine's generator (tools/engine/layout.mjs) reads this file too, before
 * TypeScript is compiled, by transpiling it alone: so it imports nothing (the generator refuses
 * it if it does). The modules export the offsets they were built with, and engine.ts checks at
 * load that they agree with these.
 */

/**
 * A local sketch, from its origin (0 unless sketches share the memory): the last hash (0-7), the
 * saturated flag (8), the volume (12), the total as an f64 (16), what the engine's line hashing
 * reports (24, 28: see chunk-hasher.ts), a limit's window step (from `step`, STEP_LAYOUT), the
 * engine's scratch area for keys and batches (from `scratch`), the cells (from `cells`).
 */
export const LOCAL_LAYOUT = {
  saturated: 8,
  volume: 12,
  total: 16,
  consumed: 24,
  emptyLines: 28,
  step: 64,
  scratch: 128,
  batch: 8192,
  cells: 16384,
} as const;

/**
 * A window step's slots (limits/window-step.ts), doubles at these byte offsets from the step's
 * address: the rule the limit writes (floor, previousFloorOffset, limit, previousWeight, add),
 * then what the step read (previous, ceiling). In a local engine's memory, the first sketch of
 * a group holds the group's at LOCAL_LAYOUT.step.
 */
export const STEP_LAYOUT = {
  floor: 0,
  previousFloorOffset: 8,
  limit: 16,
  previousWeight: 24,
  add: 32,
  previous: 40,
  ceiling: 48,
  bytes: 56,
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
