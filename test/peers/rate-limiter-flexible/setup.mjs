// Loaded with --import before mocha: registers hotcount's limiter for lib/RateLimiterMemory.js.
import { RateLimiterSketch } from '../../../build/src/flexible/index.js';

globalThis[Symbol.for('hotcount.test.RateLimiterSketch')] = RateLimiterSketch;
