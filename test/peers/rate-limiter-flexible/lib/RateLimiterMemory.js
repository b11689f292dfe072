// What the vendored tests require as '../lib/RateLimiterMemory': hotcount's RateLimiterSketch,
// registered by setup.mjs (this file is CommonJS, as the tests are; the build is ES modules).
const RateLimiterSketch = globalThis[Symbol.for('hotcount.test.RateLimiterSketch')];
if (RateLimiterSketch === undefined) {
  throw new Error('load test/peers/rate-limiter-flexible/setup.mjs with --import first');
}
module.exports = RateLimiterSketch;
