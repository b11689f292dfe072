// Mocha root hooks: the vendored tests that read RateLimiterMemory's internals
// (`_memoryStorage`, its Map and records), which RateLimiterSketch does not have, are skipped by
// title. What each checks is tested through the public API in test/flexible/.
const SKIPPED = new Map([
  ['consume 1 point', 'reads _memoryStorage.get (the count after one consume)'],
  ['makes penalty', 'reads _memoryStorage.get (the count after a penalty)'],
  ['reward points', 'reads _memoryStorage.get (the count after a reward)'],
  [
    'consume should start new time window if previous already expired (msBeforeNext is negative)',
    "rewrites a record's expiresAt in _memoryStorage._storage",
  ],
]);

exports.mochaHooks = {
  beforeEach() {
    const why = SKIPPED.get(this.currentTest.title);
    if (why !== undefined) {
      console.log(`      skipped (${why})`);
      this.skip();
    }
  },
};
