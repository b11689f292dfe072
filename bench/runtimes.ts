/**
 * The core cases on every runtime hotcount is tested on (issue 33): increment against a Map,
 * RateLimiter.check against rate-limiter-flexible's RateLimiterMemory and express-rate-limit's
 * MemoryStore, and the node:http middleware against the bare server, on Node 20, 22, 24 and 26
 * and on Bun. Each runtime runs its cases in a child process of its own (runtime-child.ts), and
 * its servers under the suite's autocannon (http.ts), so that every ratio is taken within one
 * run of that runtime; the runtimes come from the npm registry, pinned (tools/runtimes.mjs).
 * Deno is tested but not measured here (the issue names the others).
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { CONNECTIONS, DURATION_S, pair } from './http.js';
import { ratioRow } from './limits.js';
import type { BenchOptions, Row } from './measure.js';
import type { RuntimeSample } from './runtime-child.js';

const CHILD = fileURLToPath(new URL('./runtime-child.js', import.meta.url));
const TOOL = fileURLToPath(new URL('../../tools/runtimes.mjs', import.meta.url));
const RUNTIMES = ['node20', 'node22', 'node24', 'node26', 'bun'];

/** Each runtime's binary, installed from the registry if missing. */
function binaries(): Map<string, string> {
  const result = spawnSync(process.execPath, [TOOL, ...RUNTIMES], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  if (result.status !== 0) throw new Error('tools/runtimes.mjs could not install the runtimes');
  return new Map(
    result.stdout
      .trim()
      .split('\n')
      .map((line) => line.split('\t') as [string, string]),
  );
}

export async function runtimesSuite(options: BenchOptions): Promise<Row[]> {
  const { log, events, runs } = options;
  const rows: Row[] = [];
  for (const [name, bin] of binaries()) {
    log(`  ${name}: ${bin}`);
    const child = spawnSync(bin, [CHILD, String(events), String(runs)], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
      maxBuffer: 1 << 24,
    });
    if (child.status !== 0) throw new Error(`${name}: runtime-child exited with ${child.status}`);
    const sample = JSON.parse(child.stdout) as RuntimeSample;
    const rounds = new Map(Object.entries(sample.rounds));
    const on = sample.runtime;
    log(`  ${on}: autocannon, ${CONNECTIONS} connections, ${DURATION_S} s per run`);
    rows.push(
      ratioRow(
        rounds,
        `33.1 ${on}: increment, integer keys, sketch vs Map<number, number>`,
        'sketch',
        'Map',
        { factor: 8, faster: true },
      ),
      ratioRow(
        rounds,
        `33.2 ${on}: RateLimiter.check (sliding window) vs RateLimiterMemory.consume (awaited), 1M client addresses`,
        'check (sliding window)',
        'RateLimiterMemory.consume',
        { factor: 15, faster: true },
      ),
      ratioRow(
        rounds,
        `33.3 ${on}: RateLimiter.check (sliding window) vs MemoryStore.increment (awaited)`,
        'check (sliding window)',
        'MemoryStore.increment',
        { factor: 10, faster: true },
      ),
      await pair(
        options,
        'node:http + rateLimit',
        'node:http',
        `33.4 ${on}: node:http hello world + rateLimit vs without, the runtime's node:http`,
        0.9,
        bin,
      ),
    );
  }
  return rows;
}
