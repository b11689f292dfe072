export { AddressKey, ipKey } from './hash/address-key.js';
export type { Key } from './hash/key-hasher.js';
export {
  type HeavyHitter,
  HeavyHitters,
  type HeavyHittersHandle,
  type HeavyHittersOptions,
  type HeavyHittersTable,
} from './heavy-hitters/heavy-hitters.js';
export {
  Inflight,
  type InflightCounter,
  InflightGuard,
  type InflightHandle,
  type InflightOptions,
} from './limits/inflight.js';
export type { LimitSketchOptions } from './limits/options.js';
export { Rate, type RateComponents, type RateOptions } from './limits/rate.js';
export {
  type RateDecider,
  type RateLimitAlgorithm,
  type RateLimitDecision,
  RateLimiter,
  type RateLimiterHandle,
  type RateLimiterOptions,
} from './limits/rate-limiter.js';
export type { WindowsHandle as RateHandle } from './limits/windows.js';
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
