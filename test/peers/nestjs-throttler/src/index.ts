// Stands in for the throttler's source that the tests import ('../src'): the installed
// @nestjs/throttler, with hotcount's SketchThrottlerStorage made where the default storage
// would be (one per application, for a module whose options name no storage).
// The provider ThrottlerModule.forRoot and forRootAsync add (not exported from the index).
import { ThrottlerStorageProvider } from '@nestjs/throttler/dist/throttler.providers';
import { storage } from './storage';

Object.assign(ThrottlerStorageProvider, {
  useFactory: (options: { storage?: unknown } | unknown[]) =>
    !Array.isArray(options) && options.storage ? options.storage : storage(),
});

export * from '@nestjs/throttler';
