/**
 * The examples run from their TypeScript source, as docs/runtimes.md says to run them: `node
 * file.ts` where Node strips types itself (22.18 and newer), `bun file.ts`, `deno run -A
 * file.ts`, in an ES module project (this checkout is one; 'hotcount' is itself). Under Bun and
 * Deno, the examples of the core and the node:http middleware, the part claimed there.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { CORE_EXAMPLES, EXPECTED } from './helpers/examples.js';
import { redisForFile } from './helpers/redis.js';
import { RUNTIME } from './helpers/runtime.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const strips = (process.features as { typescript?: string | false }).typescript;
const redis = RUNTIME === 'node' && strips ? redisForFile(0) : null;

/** Why `name` is not run here, or false. */
function skip(name: string): string | false {
  if (RUNTIME === 'node')
    return strips ? false : `Node ${process.versions.node} does not strip types`;
  return CORE_EXAMPLES.includes(name) ? false : `${RUNTIME}: not claimed there (docs/runtimes.md)`;
}

for (const [name, expected] of Object.entries(EXPECTED)) {
  test(`examples/${name} runs from its TypeScript source, without a warning`, {
    skip: skip(name),
  }, () => {
    const file = `examples/${name}`;
    const args = RUNTIME === 'deno' ? ['run', '-A', file] : [file];
    const env = { ...process.env, REDIS_URL: redis?.server.url ?? '' };
    const result = spawnSync(process.execPath, args, { cwd: root, encoding: 'utf8', env });
    assert.equal(result.status, 0, result.stderr);
    assert.match(result.stdout, expected);
    assert.doesNotMatch(result.stderr, /Warning/);
  });
}
