#!/usr/bin/env node
// The runtime matrix: the README's test command (`npm test`, the peers' own suites included) on
// each pinned Node, the same on a copy whose peers sit at each end of their ranges, and the
// suites that Bun and Deno run. Each leg's output goes to .matrix/<leg>.log; a leg fails on a
// failed test or on a warning printed by the runtime (a deprecation a user would see).
//
//   npm run test:matrix                  every leg, one after the other
//   npm run test:matrix -- node26 bun    the legs named
//
// The legs run in turn, never two at once: several suites time what they do against a clock
// they inject, but they start real servers and workers, and a loaded 2-core machine is slow.
import { spawn } from 'node:child_process';
import { chmodSync, createWriteStream, mkdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkoutWith, peerVersions } from './peers.mjs';
import { runtime } from './runtimes.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const OUT = join(ROOT, '.matrix');

/**
 * A runtime's warning line: Node's `(node:123) [DEP0190] DeprecationWarning: ...`, Deno's
 * `Warning ...` (colours stripped first).
 */
const WARNING = /\((node|bun|deno):\d+\) (\[\w+\] )?\w*Warning\b.*|^Warning\b.*/;

/** The environment of a runtime's leg: its binary's folder first on PATH. */
const envFor = (bin) => ({ ...process.env, PATH: `${dirname(bin)}:${process.env.PATH}` });

/** Runs `command` with `args` in `cwd` under `bin`'s environment; output to `log`. */
function run(bin, command, args, cwd, log) {
  return new Promise((resolve) => {
    const env = envFor(bin);
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    const file = createWriteStream(log, { flags: 'a' });
    child.stdout.pipe(file, { end: false });
    child.stderr.pipe(file, { end: false });
    child.on('close', (code, signal) => file.end(() => resolve(code ?? signal)));
  });
}

/**
 * What Bun and Deno run, with their own test runners (both take node:test): the core (the sketch
 * on both engines, its binary format, aging, shared memory across workers; the limits; heavy
 * hitters; the hashing), the node:http middleware in front of the runtime's own node:http
 * server, the Hono middleware in front of the runtime's own server (Bun.serve, Deno.serve),
 * RateLimiterSketch against rate-limiter-flexible's RateLimiterMemory, and the examples of those
 * run from their TypeScript source. A test of what only Node can do is skipped there, saying why
 * (test/helpers/runtime.ts).
 */
const ELSEWHERE = [
  'build/test/sketch/',
  'build/test/quantiles/',
  'build/test/hash/',
  'build/test/engine/',
  'build/test/limits/',
  'build/test/heavy-hitters/',
  'build/test/http/rate-limit.test.js',
  'build/test/http/inflight-limit.test.js',
  'build/test/http/client-key.test.js',
  'build/test/hono/hono.test.js',
  'build/test/flexible/rate-limiter-sketch.test.js',
  'build/test/examples-source.test.js',
];
/** The build, by the machine's Node (tsc and the engine's generator run on Node). */
const BUILD = ['npm', ['run', 'build', '--silent']];
/** `npm test` without its build: for the peer legs, whose copies are built before the swap. */
const TEST_BUILT = ['npm', ['run', 'test:built', '--silent']];

/** The legs: what each runs, on which runtime, in which folder. */
const LEGS = {
  node22: { runtime: 'node22', steps: () => [['npm', ['test']]] },
  node24: { runtime: 'node24', steps: () => [['npm', ['test']]] },
  node26: { runtime: 'node26', steps: () => [['npm', ['test']]] },
  // The newest peers need the newest Node (undici 8 needs >= 22.19); the lowest run on the
  // oldest Node that engines allows.
  'peers-newest': { runtime: 'node26', peers: 'newest', steps: () => [TEST_BUILT] },
  'peers-lowest': { runtime: 'nodeFloor', peers: 'lowest', steps: () => [TEST_BUILT] },
  // Bun's runner stops a test after 5 s by default; the property tests run longer.
  bun: {
    runtime: 'bun',
    steps: (bin) => [
      BUILD,
      [bin, ['test', '--timeout', '600000', ...ELSEWHERE.map((p) => `./${p}`)]],
    ],
  },
  deno: {
    runtime: 'deno',
    steps: (bin) => [BUILD, [bin, ['test', '-A', '--no-check', ...ELSEWHERE]]],
  },
};

async function leg(name) {
  const spec = LEGS[name];
  const log = join(OUT, `${name}.log`);
  createWriteStream(log).end();
  const started = performance.now();
  const { bin, version, kind } = runtime(spec.runtime);
  let cwd = ROOT;
  if (spec.peers === undefined) {
    console.log(`${name}: ${kind} ${version}`);
  } else {
    const versions = peerVersions(spec.peers);
    const peers = Object.entries(versions).map(([peer, v]) => `${peer}@${v}`);
    console.log(`${name}: ${kind} ${version} with ${peers.join(' ')}`);
    cwd = checkoutWith(join(OUT, name), versions, envFor(bin));
  }
  let failed = null;
  for (const [command, args] of spec.steps(bin)) {
    const code = await run(bin, command, args, cwd, log);
    if (code !== 0) {
      failed = `${command} ${args.join(' ')} exited with ${code}`;
      break;
    }
  }
  // biome-ignore lint/suspicious/noControlCharactersInRegex: colour codes, stripped
  const output = readFileSync(log, 'utf8').replace(/\x1b\[[0-9;]*m/g, '');
  const warnings = [...new Set(output.split('\n').filter((line) => WARNING.test(line)))];
  if (failed === null && warnings.length > 0) failed = `the runtime printed a warning`;
  const seconds = Math.round((performance.now() - started) / 1000);
  if (failed === null) {
    console.log(`${name}: passed in ${seconds} s`);
    return true;
  }
  const failures = output
    .split('\n')
    .filter((line) => /^\s*not ok|^✖|^\(fail\)|\.\.\. FAILED/.test(line));
  console.log(`${name}: FAILED after ${seconds} s: ${failed} (log: ${log})`);
  for (const line of [...failures.slice(0, 40), ...warnings]) console.log(`  ${line.trim()}`);
  if (failures.length === 0 && warnings.length === 0) {
    console.log(output.split('\n').slice(-40).join('\n'));
  }
  return false;
}

const names = process.argv.length > 2 ? process.argv.slice(2) : Object.keys(LEGS);
for (const name of names) {
  if (LEGS[name] === undefined) {
    console.error(`matrix: unknown leg '${name}': one of ${Object.keys(LEGS).join(', ')}`);
    process.exit(2);
  }
}
// 0700, as a home folder often is: the peer legs' copies then run from a folder that other
// users cannot enter, where a test that switched user to reach a file would fail.
mkdirSync(OUT, { recursive: true });
chmodSync(OUT, 0o700);
const started = performance.now();
const failed = [];
for (const name of names) {
  try {
    if (!(await leg(name))) failed.push(name);
  } catch (error) {
    console.log(`${name}: FAILED: ${error.message}`);
    failed.push(name);
  }
}
const minutes = ((performance.now() - started) / 60_000).toFixed(1);
if (failed.length > 0) {
  console.log(
    `matrix: ${failed.length} of ${names.length} legs failed (${failed.join(', ')}) in ${minutes} min`,
  );
  process.exit(1);
}
console.log(`matrix: ${names.length} legs passed in ${minutes} min`);
