/** The examples of the README and the guides (examples/*.ts), and what each prints. */

/** What each example prints, as a user would check it. */
export const EXPECTED: Record<string, RegExp> = {
  'sketch.ts': /^customer-42: (\d+), error bound 0\.0010\n$/,
  'threads.ts': /^customer-7: (\d+) of 200000 requests\n$/,
  'heavy-hitters.ts':
    /^customer-1: 1000 \(true count in \[1000, 1000\]\)\ncustomer-2: 500 .*\ncustomer-3: 333 .*\n$/,
  'express.ts': /^200 200 429 200\n$/,
  'fastify.ts': /^200 200 429 200 429 200 200 200\n$/,
  'http.ts': /^200 200 429\n$/,
  'hono.ts': /^200 200 429\n$/,
  'koa.ts': /^200 200 429\n$/,
  'nest.ts': /^200 200 429\n$/,
  'flexible.ts': /^401, 401, 401, 429 \(retry in 3600 s\), 429 \(retry in 3600 s\), 200\n$/,
  'limits.ts':
    /^ok, ok, ok, ok, ok, 429 \(retry in \d+ ms\), 429 \(retry in \d+ ms\)\nthird: 503\nin progress after release: 0\n$/,
  'proxy.ts': /^200 200 200 429\n$/,
  'redis.ts': /^200 200 429\n$/,
  // Within 1% of the exact p50 (30) and p99 (1,200), and never above the largest value.
  'quantiles.ts':
    /^p50 (29\.[7-9]|30\.[0-3]) ms, p99 (11(8[89]|9\d)\.\d|1200\.0) ms, max 1200 ms of 1000\n$/,
};

/** The examples that use only the core and the node:http middleware (Bun and Deno run them). */
export const CORE_EXAMPLES = [
  'sketch.ts',
  'threads.ts',
  'heavy-hitters.ts',
  'http.ts',
  'limits.ts',
  'quantiles.ts',
];
