// hotcount's storage class, registered by setup.mjs (an ES module, loaded with --import) before
// the tests start: these CommonJS files do not require hotcount's ES modules themselves.
const KEY = Symbol.for('hotcount.test.SketchThrottlerStorage');

export function storageClass(): new () => any {
  const registered = (globalThis as Record<symbol, unknown>)[KEY];
  if (typeof registered !== 'function') {
    throw new Error('run with --import ./test/peers/nestjs-throttler/setup.mjs');
  }
  return registered as new () => any;
}

export function storage(): any {
  const Storage = storageClass();
  return new Storage();
}
