export type { Key } from './hash/key-hasher.js';
export {
  type HeavyHitter,
  HeavyHitters,
  type HeavyHittersHandle,
  type HeavyHittersOptions,
  type HeavyHittersTable,
} from './heavy-hitters/heavy-hitters.js';
export {
  type CountMinOptions,
  CountMinSketch,
  type EngineName,
  type Keys,
  type SketchHandle,
} from './sketch/count-min.js';
export { SATURATED } from './sketch/counters.js';
export { DEFAULT_DEPTH, DEFAULT_WIDTH, MAX_COUNTERS } from './sketch/dimensions.js';
export { FORMAT_VERSION } from './sketch/format.js';
