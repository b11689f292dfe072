/**
 * The core's door for integrations (http/, redis/, proxy/, cli/ and every folder added for a
 * framework or a peer's API): the public API of index.ts, and the internal names that an
 * integration builds on: the errors and the clock, key hashing and secrets, the limits' rules
 * and decisions, the drop-in stores' per-client windows, the sketch's binary form. An
 * integration imports the core from here (or index.ts), never from a core file, so that the core
 * can change inside without its integrations following (test/structure.test.ts holds it). Not
 * an entry point of the package: nothing here beyond index.ts is public.
 */
export { checkClock, readClock } from './clock.js';
export type { ChunkHasher } from './engine/chunk-hasher.js';
export { checkOptionNames, integerIn, rangeError, typeError } from './errors.js';
export { addressKeyIn } from './hash/address-key.js';
export { checkKey, KeyHasher } from './hash/key-hasher.js';
export { copySecret, hashKeyWords, randomSecret, secretFingerprint } from './hash/secret.js';
export * from './index.js';
export {
  BlockingCall,
  BlockingWindows,
  MAX_BLOCKING_CAPACITY,
} from './limits/blocking-windows.js';
export { ClientWindows, checkStoreWindows } from './limits/client-windows.js';
export {
  CountWindow,
  ExpiringCounts,
  MAX_EXPIRING_CAPACITY,
} from './limits/expiring-counts.js';
export type { GcraGrid } from './limits/gcra.js';
export { checkCount, UNSHARED_SKETCH_OPTION_NAMES } from './limits/options.js';
export {
  gcraDecision,
  limiterRule,
  slidingCeiling,
  slidingDecision,
} from './limits/rate-limiter.js';
export { WindowStep } from './limits/window-step.js';
export { cellsOf } from './sketch/columns.js';
export { dimensionsOf, resolveDimensions } from './sketch/dimensions.js';
export { encodeSketch } from './sketch/format.js';
export { checkAmount, type SketchHasher } from './sketch/sketch-options.js';
