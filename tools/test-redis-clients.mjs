#!/usr/bin/env node
// The Redis suites (build/test/redis/) once more for each client kind other than the default,
// which `npm test`'s main run covers (ioredis 5): node-redis and ioredis 6 in RESP2 and RESP3,
// iovalkey. The kinds are test/helpers/redis-clients.ts's; each run sets HOTCOUNT_REDIS_CLIENT.
// Two kinds run at a time (each starts its own redis-servers on free ports); a kind's whole
// output is printed when it fails, a line when it passes.
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

const { CLIENT_KINDS } = await import('../build/test/helpers/redis-clients.js');
const folder = join('build', 'test', 'redis');
const files = readdirSync(folder)
  .filter((name) => name.endsWith('.test.js'))
  .map((name) => join(folder, name));
const kinds = CLIENT_KINDS.filter((kind) => kind !== 'ioredis');

function run(kind) {
  return new Promise((resolve) => {
    const started = Date.now();
    const child = spawn(process.execPath, ['--test', ...files], {
      env: { ...process.env, HOTCOUNT_REDIS_CLIENT: kind },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk) => {
      output += chunk;
    });
    child.stderr.on('data', (chunk) => {
      output += chunk;
    });
    child.on('close', (code) => {
      const seconds = ((Date.now() - started) / 1000).toFixed(1);
      // TAP (# pass N) or the spec reporter (ℹ pass N), whichever the runtime prints when piped.
      const pass = /^(?:#|ℹ) pass (\d+)/m.exec(output)?.[1] ?? '?';
      if (code === 0) {
        console.log(`redis suites with ${kind}: ${pass} passed (${seconds} s)`);
      } else {
        console.log(`redis suites with ${kind}: FAILED (exit ${code}, ${seconds} s)\n${output}`);
      }
      resolve(code === 0);
    });
  });
}

const queue = [...kinds];
const results = [];
async function worker() {
  while (queue.length > 0) results.push(await run(queue.shift()));
}
await Promise.all([worker(), worker()]);
if (results.some((passed) => !passed)) process.exit(1);
