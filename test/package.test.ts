/**
 * The package as npm ships it: packed from a clean checkout (its prepack builds it), installed
 * into a scratch project, imported and run from there.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import {
  cpSync,
  type Dirent,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, posix, relative } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { RedisServer } from './helpers/redis.js';

const root = fileURLToPath(new URL('../../', import.meta.url));

/**
 * The files of a clean checkout below `folder` (relative to the root): everything but what
 * .gitignore leaves out (node_modules, build, bench data, the matrix's runtimes and copies,
 * logs) and .git. Walked, not asked of git, so that the tests need no git.
 */
function checkoutFiles(folder = ''): string[] {
  const ignored =
    /^(\.git|node_modules|build|bench\/\.data|\.bench-build|\.runtimes|\.matrix|docs\/api)(\/|$)|\.log$|^src\/engine\/engine-bytes\.ts$/;
  return (readdirSync(join(root, folder), { recursive: true, withFileTypes: true }) as Dirent[])
    .filter((entry) => entry.isFile())
    .map((entry) => relative(root, join(entry.parentPath ?? entry.path, entry.name)))
    .filter((path) => !ignored.test(path));
}
const npm = (args: string[], cwd: string) =>
  execFileSync('npm', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

test('npm pack on a clean checkout ships the build, its types and LICENSE, and no tests or benchmarks', async () => {
  const work = mkdtempSync(join(tmpdir(), 'hotcount-pack-'));
  const checkout = join(work, 'checkout');
  // What a clean clone holds: no build/, no node_modules.
  for (const path of checkoutFiles()) {
    mkdirSync(dirname(join(checkout, path)), { recursive: true });
    cpSync(join(root, path), join(checkout, path));
  }
  symlinkSync(join(root, 'node_modules'), join(checkout, 'node_modules'));

  const [packed] = JSON.parse(npm(['pack', '--json', '--pack-destination', work], checkout));
  const shipped: string[] = packed.files.map((entry: { path: string }) => entry.path);
  for (const path of [
    'package.json',
    'README.md',
    'LICENSE',
    'build/src/index.js',
    'build/src/index.d.ts',
    'build/src/cli/main.js',
  ]) {
    assert.ok(shipped.includes(path), `${path} is shipped`);
  }
  const stray = shipped.filter(
    (path) => /(^|\/)(test|bench|examples)\//.test(path) && path !== 'bench/REPORT.md',
  );
  assert.deepEqual(stray, [], 'no tests, benchmarks or examples (the report is documentation)');
  // The registry shows the README: a link to a file the package does not ship is a dead link.
  for (const path of shipped.filter((file) => file.endsWith('.md'))) {
    const text = readFileSync(join(checkout, path), 'utf8');
    for (const [, target] of text.matchAll(/\]\(([^)#:]+)(#[^)]*)?\)/g)) {
      const resolved = posix.normalize(posix.join(posix.dirname(path), target));
      assert.ok(shipped.includes(resolved), `${path} links ${target}, which is not shipped`);
    }
  }

  // A user's project: install the tarball (no dependencies, so no network), import, run.
  const project = join(work, 'project');
  mkdirSync(project);
  writeFileSync(join(project, 'package.json'), '{ "name": "scratch", "type": "module" }\n');
  npm(['install', '--offline', '--no-audit', '--no-fund', join(work, packed.filename)], project);
  writeFileSync(
    join(project, 'use.js'),
    "import { CountMinSketch } from 'hotcount';\n" +
      "const s = new CountMinSketch({ width: 64, depth: 2 });\ns.increment('a', 3);\n" +
      "console.log(s.estimate('a'));\n",
  );
  assert.equal(
    execFileSync(process.execPath, ['use.js'], { cwd: project, encoding: 'utf8' }),
    '3\n',
  );
  // TypeScript finds every entry point's types, whatever module resolution the project uses:
  // through `exports` (node16, bundler) or, for projects still on `node` (node10), which reads
  // no `exports`, through `types` and `typesVersions`.
  writeFileSync(
    join(project, 'types.ts'),
    "import { CountMinSketch } from 'hotcount';\nimport hotcountFastify from 'hotcount/fastify';\n" +
      "import { rateLimit } from 'hotcount/http';\nimport { LimitingProxy } from 'hotcount/proxy';\n" +
      "import { RedisRateLimiter } from 'hotcount/redis';\nimport { inflightLimit } from 'hotcount/koa';\n" +
      "import { rateLimit as honoLimit } from 'hotcount/hono';\n" +
      "import { SketchThrottlerStorage } from 'hotcount/nest';\n" +
      'export const used = [CountMinSketch, rateLimit, hotcountFastify, LimitingProxy, RedisRateLimiter, inflightLimit, honoLimit, SketchThrottlerStorage];\n',
  );
  const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  for (const [resolution, module] of [
    ['node10', 'commonjs'],
    ['node16', 'node16'],
    ['bundler', 'esnext'],
  ]) {
    const config = join(project, `tsconfig.${resolution}.json`);
    const compilerOptions = { noEmit: true, strict: true, skipLibCheck: true, types: [] };
    writeFileSync(
      config,
      JSON.stringify({
        compilerOptions: { ...compilerOptions, moduleResolution: resolution, module },
        files: ['types.ts'],
      }),
    );
    const result = spawnSync(process.execPath, [tsc, '-p', config], { encoding: 'utf8' });
    assert.equal(result.status, 0, `moduleResolution ${resolution}: ${result.stdout}`);
  }
  // From CommonJS (what `npm init -y` makes): require() of an ES module, which Node does
  // without a flag or a warning from 20.19 and 22.12, the versions `engines` asks for.
  writeFileSync(
    join(project, 'use.cjs'),
    "const { rateLimit } = require('hotcount/http');\nconst { CountMinSketch } = require('hotcount');\n" +
      "const s = new CountMinSketch({ width: 64, depth: 2 });\ns.increment('a', 2);\n" +
      "console.log(typeof rateLimit, s.estimate('a'));\n",
  );
  const required = spawnSync(process.execPath, ['use.cjs'], { cwd: project, encoding: 'utf8' });
  assert.equal(required.stdout, 'function 2\n', required.stderr);
  assert.equal(required.stderr, '', 'no warning');
  const version = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version;
  const bin = join(project, 'node_modules', '.bin', 'hotcount');
  assert.equal(execFileSync(bin, ['--version'], { encoding: 'utf8' }), `${version}\n`);
  assert.match(
    execFileSync(bin, ['top', '--json'], { input: 'x\nx\ny\n', encoding: 'utf8' }),
    /"total": 3/,
  );
  // hotcount/redis in a project that has node-redis and no other client (the clients are
  // optional peers): node-redis as its user installs it, a limiter over it on a real server.
  for (const name of ['redis', '@redis']) {
    symlinkSync(join(root, 'node_modules', name), join(project, 'node_modules', name));
  }
  assert.throws(() => createRequire(join(project, 'x.js')).resolve('ioredis'), /Cannot find/);
  const server = await RedisServer.start();
  try {
    writeFileSync(
      join(project, 'redis.js'),
      "import { createClient } from 'redis';\nimport { RedisRateLimiter } from 'hotcount/redis';\n" +
        `const redis = createClient({ socket: { host: '127.0.0.1', port: ${server.port} } });\n` +
        'await redis.connect();\n' +
        "const limiter = new RedisRateLimiter({ redis, name: 'pack', secret: new Uint8Array(16).fill(1), limit: 1, windowMs: 60000 });\n" +
        "console.log((await limiter.check('a')).allowed, (await limiter.check('a')).allowed);\n" +
        'await limiter.close();\nredis.destroy();\n',
    );
    assert.equal(
      execFileSync(process.execPath, ['redis.js'], { cwd: project, encoding: 'utf8' }),
      'true false\n',
    );
  } finally {
    await server.stop();
  }
  // The proxy forwards with undici, an optional peer dependency the install above left out:
  // one line that says what to install, exit 1, no stack trace.
  const proxy = spawnSync(bin, ['proxy', '--demo'], { encoding: 'utf8', timeout: 30_000 });
  assert.equal(proxy.status, 1);
  assert.equal(
    proxy.stderr,
    "hotcount: hotcount proxy forwards with undici, which is not installed: run 'npm install undici'\n",
  );
  // An undici the proxy cannot run on, as npm installs it without a word (it warns on engines,
  // never refuses): undici 8 on a Node older than its engines field (Node 20 then fails inside
  // undici while loading it), or an undici of another major. Stand-ins of its package.json: what
  // is tested is that the proxy reads it first, and says so in one line.
  const undici = join(project, 'node_modules', 'undici');
  mkdirSync(undici);
  writeFileSync(join(undici, 'index.js'), "throw new Error('undici was loaded');\n");
  const installed = (version: string, node: string) => {
    writeFileSync(
      join(undici, 'package.json'),
      JSON.stringify({ name: 'undici', version, main: 'index.js', engines: { node } }),
    );
    return spawnSync(bin, ['proxy', '--demo'], { encoding: 'utf8', timeout: 30_000 });
  };
  const tooNew = installed('8.14.1', '>=999.0.0');
  assert.equal(tooNew.status, 1);
  assert.equal(
    tooNew.stderr,
    `hotcount: undici 8.14.1 needs Node 999.0.0 or newer, and this is Node ${process.versions.node}: run 'npm install undici@7', or a newer Node\n`,
  );
  const advice =
    Number(process.versions.node.split('.')[0]) >= 23 ||
    /^22\.(19|[2-9]\d)\./.test(process.versions.node)
      ? 8
      : 7;
  for (const version of ['6.21.3', '7.27.0']) {
    const refused = installed(version, '>=18.17');
    assert.equal(refused.status, 1);
    assert.equal(
      refused.stderr,
      `hotcount: hotcount proxy forwards with undici 7.28.0 or newer (7 or 8), and undici ${version} is installed: run 'npm install undici@${advice}'\n`,
    );
  }
});

test('npm test runs every test file and no helper', () => {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  assert.match(pkg.scripts.test, /npm run test:built/);
  const patterns: string[] = pkg.scripts['test:built'].match(/build\/test\/\S*\.test\.js/g);
  const files = checkoutFiles('test').filter((path) => path.endsWith('.ts'));
  assert.ok(
    files.filter((path) => path.endsWith('.test.ts')).length >= 10,
    'the test files are found',
  );
  const matches = (path: string) =>
    patterns.some((pattern) => {
      const built = `build/${path.replace(/\.ts$/, '.js')}`;
      const regex = new RegExp(`^${pattern.replace(/[.]/g, '\\.').replace(/\*/g, '[^/]*')}$`);
      return regex.test(built);
    });
  for (const path of files) {
    assert.equal(matches(path), path.endsWith('.test.ts'), path);
  }
});
