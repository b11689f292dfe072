/**
 * hotcount: counting and limiting in fixed memory. The Count-Min sketch (`CountMinSketch`),
 * heavy hitters (`HeavyHitters`), rates and limits (`Rate`, `RateLimiter`, `Inflight`), latency
 * quantiles (`QuantileSketch`, `SlidingQuantiles`), and client addresses as keys (`ipKey`).
 *
 *   import { CountMinSketch } from 'hotcount';
 *   const sketch = new CountMinSketch({ epsilon: 0.001, delta: 0.01 });
 *   sketch.increment('customer-42');
 *
 * @module
 */
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
export { QuantileSketch, type QuantileSketchOptions } from './quantiles/quantile-sketch.js';
export { SlidingQuantiles, type SlidingQuantilesOptions } from './quantiles/sliding-quantiles.js';
export type { AgingHandle } from './sketch/aging.js';
export { CountMinSketch } from './sketch/count-min.js';
export { SATURATED } from './sketch/counters.js';
export {
  DEFAULT_DEPTH,
  DEFAULT_WIDTH,
  type Dimensions,
  MAX_COUNTERS,
} from './sketch/dimensions.js';
export { FORMAT_VERSION } from './sketch/format.js';
export type { CountMinOptions, EngineName, Keys, SketchHandle } from './sketch/sketch-options.js';
