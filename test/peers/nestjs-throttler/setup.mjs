// Loaded with --import before the vendored tests: registers hotcount's storage for src/storage.ts.
import { SketchThrottlerStorage } from '../../../build/src/nest/index.js';

globalThis[Symbol.for('hotcount.test.SketchThrottlerStorage')] = SketchThrottlerStorage;
