/**
 * hotcount/flexible: rate-limiter-flexible's limiter API in fixed memory (the peer is a peer
 * dependency: RateLimiterSketch extends its RateLimiterAbstract and answers with its
 * RateLimiterRes, so that the peer's insuranceLimiter, RateLimiterUnion and wrappers take it).
 *
 *   import { RateLimiterSketch } from 'hotcount/flexible';
 *   const limiter = new RateLimiterSketch({ points: 5, duration: 60 });
 *   await limiter.consume(userName); // rejects with a RateLimiterRes when over
 *
 * @module
 */
export {
  type CallOptions,
  RateLimiterSketch,
  type RateLimiterSketchOptions,
} from './rate-limiter-sketch.js';
