#!/usr/bin/env node
// What `npm test` needs beyond npm: Debian's chromium (the status page test drives it with
// playwright-core) and redis-server (the Redis tests start servers of their own). A missing one is installed with apt-get, saying so, when this runs as root
// with apt-get at hand; otherwise the tests stop here with what to run.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const NEEDED = [
  { path: '/usr/bin/chromium', pkg: 'chromium', why: 'the status page test' },
  {
    path: '/usr/bin/redis-server',
    pkg: 'redis-server',
    why: 'the Redis tests, which start their own',
  },
];

const missing = NEEDED.filter(({ path }) => !existsSync(path));
if (missing.length > 0) {
  const pkgs = missing.map(({ pkg }) => pkg);
  const what = missing.map(({ pkg, why }) => `${pkg} (${why})`).join(', ');
  const root = process.getuid?.() === 0;
  const apt = spawnSync('sh', ['-c', 'command -v apt-get'], { encoding: 'utf8' }).status === 0;
  if (!root || !apt) {
    console.error(`hotcount tests: missing ${what}.`);
    console.error(`Install with: sudo apt-get update && sudo apt-get install -y ${pkgs.join(' ')}`);
    process.exit(1);
  }
  console.error(
    `hotcount tests: missing ${what}; installing: apt-get install -y ${pkgs.join(' ')}`,
  );
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  for (const args of [
    ['update', '-qq'],
    ['install', '-y', '-qq', ...pkgs],
  ]) {
    const result = spawnSync('apt-get', args, { stdio: ['ignore', 'ignore', 'inherit'], env });
    if (result.status !== 0) {
      console.error(`hotcount tests: apt-get ${args.join(' ')} failed (exit ${result.status}).`);
      process.exit(1);
    }
  }
  const still = missing.filter(({ path }) => !existsSync(path));
  if (still.length > 0) {
    console.error(
      `hotcount tests: ${still.map(({ path }) => path).join(', ')} still missing after apt-get.`,
    );
    process.exit(1);
  }
}
