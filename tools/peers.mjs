// The peers at the ends of their ranges: a copy of the checkout whose node_modules holds, over
// the lockfile, the lowest or the newest version of each peer that package.json allows, so that
// the suites that use them prove the range (the lockfile alone proves one version of each).
//
// The optional peers' ranges are package.json's peerDependencies. The libraries the drop-in
// stores plug into (express-rate-limit, @fastify/rate-limit) are not peers, since hotcount never
// loads them; the newest end takes them too, at the newest version their devDependencies range
// allows, so that a change of theirs (as express-rate-limit 8.7's MemoryStore.get) shows.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const STORE_PEERS = ['express-rate-limit', '@fastify/rate-limit'];
/** Nest's packages the tests of hotcount/nest run (devDependencies, at the throttler's Nest). */
const NEST = [
  '@nestjs/common',
  '@nestjs/core',
  '@nestjs/testing',
  '@nestjs/platform-express',
  '@nestjs/platform-fastify',
];

/** [major, minor, patch] of a release version; null for a prerelease. */
function parts(version) {
  const match = /^(\d+)\.(\d+)\.(\d+)$/.exec(version);
  return match === null ? null : match.slice(1).map(Number);
}

function compare(a, b) {
  const [x, y] = [parts(a), parts(b)];
  return x[0] - y[0] || x[1] - y[1] || x[2] - y[2];
}

/** The releases of `name` that `range` allows, oldest first, as the registry lists them. */
function releases(name, range) {
  const listed = JSON.parse(
    execFileSync('npm', ['view', `${name}@${range}`, 'version', '--json'], { encoding: 'utf8' }),
  );
  const versions = (Array.isArray(listed) ? listed : [listed]).filter((v) => parts(v) !== null);
  if (versions.length === 0) throw new Error(`no release of ${name} satisfies ${range}`);
  return versions.sort(compare);
}

/** { name: version } for `end` ('lowest' or 'newest'). */
export function peerVersions(end) {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
  const ranges = { ...pkg.peerDependencies };
  if (end === 'newest') {
    for (const name of STORE_PEERS) ranges[name] = pkg.devDependencies[name];
  }
  const chosen = {};
  for (const [name, range] of Object.entries(ranges)) {
    const versions = releases(name, range);
    chosen[name] = end === 'lowest' ? versions[0] : versions[versions.length - 1];
  }
  // A throttler runs inside the Nest it allows: the newest Nest its peer range takes, so that
  // the tests' Nest apps are one a user of that throttler can have.
  const throttler = chosen['@nestjs/throttler'];
  if (throttler !== undefined) {
    const peers = JSON.parse(
      execFileSync(
        'npm',
        ['view', `@nestjs/throttler@${throttler}`, 'peerDependencies', '--json'],
        {
          encoding: 'utf8',
        },
      ),
    );
    for (const name of NEST) {
      const versions = releases(name, peers['@nestjs/core']);
      chosen[name] = versions[versions.length - 1];
    }
  }
  return chosen;
}

/**
 * A copy of the checkout in `folder` (the files git tracks or would track, and node_modules),
 * built, then with `versions` installed over the lockfile, which stays as it is, by npm under
 * `env` (the runtime the copy is for first on its PATH). Answers the folder: its tests are run
 * with `npm run test:built`, since `npm test` would build again against the other peers.
 */
export function checkoutWith(folder, versions, env = process.env) {
  rmSync(folder, { recursive: true, force: true });
  const files = execFileSync(
    'git',
    ['ls-files', '-z', '--cached', '--others', '--exclude-standard'],
    {
      cwd: ROOT,
      encoding: 'utf8',
    },
  )
    .split('\0')
    .filter((path) => path !== '');
  for (const path of files) {
    const to = join(folder, path);
    mkdirSync(dirname(to), { recursive: true });
    try {
      cpSync(join(ROOT, path), to);
    } catch (error) {
      if (error.code !== 'ENOENT') throw error; // a tracked file deleted in the work tree
    }
  }
  cpSync(join(ROOT, 'node_modules'), join(folder, 'node_modules'), { recursive: true });
  // Built as the package is published, against the lockfile's peers (their types included);
  // what the peers at an end of their ranges then run is that build.
  execFileSync('npm', ['run', 'build', '--silent'], {
    cwd: folder,
    env,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const specs = Object.entries(versions).map(([name, version]) => `${name}@${version}`);
  execFileSync(
    'npm',
    ['install', '--no-save', '--no-audit', '--no-fund', '--ignore-scripts', ...specs],
    { cwd: folder, env, stdio: ['ignore', 'ignore', 'inherit'] },
  );
  // What npm installed is what was asked for, or the leg would prove another version.
  for (const [name, version] of Object.entries(versions)) {
    const file = join(folder, 'node_modules', name, 'package.json');
    const got = JSON.parse(readFileSync(file, 'utf8')).version;
    if (got !== version) throw new Error(`asked npm for ${name}@${version}, got ${got}`);
  }
  return folder;
}
