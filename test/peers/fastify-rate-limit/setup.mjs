// Loaded with --import before the vendored tests: gives the wrapper (index.js) hotcount's store.
import { createRequire } from 'node:module';
import { FastifyRateLimitStore } from '../../../build/src/http/fastify.js';

createRequire(import.meta.url)('./index.js').useStore(FastifyRateLimitStore);
