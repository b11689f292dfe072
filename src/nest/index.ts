/**
 * hotcount/nest: a storage for @nestjs/throttler 6 in fixed memory (the throttler is a peer
 * dependency, imported for its types only).
 *
 *   import { SketchThrottlerStorage } from 'hotcount/nest';
 *   ThrottlerModule.forRoot({ throttlers: [{ ttl: 60_000, limit: 100 }], storage: new SketchThrottlerStorage() });
 *
 * The module, the guard, `@Throttle` and `@SkipThrottle`, named throttlers and their headers stay
 * the throttler's; only the storage changes.
 *
 * @module
 */
export {
  type SketchThrottlerRecord,
  SketchThrottlerStorage,
  type SketchThrottlerStorageOptions,
} from './sketch-throttler-storage.js';
