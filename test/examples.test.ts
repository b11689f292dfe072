/**
 * The docs' examples are files in examples/, run here as a user runs them: every ```ts block of
 * the README and of the guides (docs/*.md) that imports something is one of them, word for
 * word. And nothing the README held before it became a front page was lost: each of its
 * headings is a heading of the README or of a guide.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { EXPECTED } from './helpers/examples.js';
import { redisForFile } from './helpers/redis.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const guides = readdirSync(`${root}docs`)
  .filter((name) => name.endsWith('.md'))
  .map((name) => `docs/${name}`);
const pages = ['README.md', ...guides].map((path) => ({
  path,
  text: readFileSync(`${root}${path}`, 'utf8'),
}));

/** The README's headings before it was cut to a front page (issue 23): each has a home. */
const HEADINGS = [
  'hotcount',
  'Quick start',
  'The sketch',
  'Engines',
  'Guarantees',
  'Aging',
  'Sizing',
  'The secret',
  'Binary format (version 1)',
  'Threads: one sketch for every worker',
  'Folding: threads that count apart, with a stated bound',
  'Heavy hitters',
  'Limits: rates, rate limiting, requests in progress',
  'Windows',
  'Rate limiting: the sliding window (default)',
  'Rate limiting: GCRA',
  'Requests in progress: Inflight',
  'In threads',
  'HTTP: limits as middleware (`hotcount/http`)',
  'Fastify (`hotcount/fastify`)',
  '`hotcount proxy`: the limiting reverse proxy',
  'In front of a real service',
  'The status page (`--admin`)',
  'A fleet: sketches in Redis (`hotcount/redis`)',
  'Cells in Redis',
  'Rate limiting in Redis',
  'Local-first: the hot path in process',
  'When Redis goes away',
  'Requests in progress across processes',
  'Redis Cluster',
  'Measured',
  '`hotcount top`',
  'Performance',
  'Development',
];

/** The headings of a page, outside code blocks. */
function headings(text: string): string[] {
  let fenced = false;
  const found: string[] = [];
  for (const line of text.split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    else if (!fenced && /^#{1,6} /.test(line)) found.push(line.replace(/^#+ /, ''));
  }
  return found;
}

test('every block of the README and the guides that imports is an example file, word for word', () => {
  const used = new Set<string>();
  for (const { path, text } of pages) {
    for (const [, block] of text.matchAll(/```ts\n([\s\S]*?)```/g)) {
      if (!/^import /m.test(block)) continue;
      const name = /^\/\/ examples\/([\w-]+\.ts)\n/.exec(block)?.[1];
      assert.ok(name !== undefined, `a block of ${path} that imports names its file:\n${block}`);
      assert.equal(block, readFileSync(`${root}examples/${name}`, 'utf8'), `${path}: ${name}`);
      used.add(name);
    }
  }
  const files = readdirSync(`${root}examples`).sort();
  assert.deepEqual(files, Object.keys(EXPECTED).sort(), 'each example is checked below');
  assert.deepEqual([...used].sort(), files, 'each example is shown in the README or a guide');
});

test('every heading of the README before issue 23 is a heading of the README or a guide', () => {
  const homes = new Set(pages.flatMap(({ text }) => headings(text)));
  assert.deepEqual(
    HEADINGS.filter((heading) => !homes.has(heading)),
    [],
  );
});

test('the README is a front page: at most 250 lines, every guide one link away', () => {
  const readme = pages[0].text;
  assert.ok(readme.split('\n').length <= 250, `${readme.split('\n').length} lines`);
  for (const guide of guides) {
    assert.ok(readme.includes(`](${guide})`) || guide === 'docs/README.md', `links ${guide}`);
  }
});

test('every relative link of the README and the guides points at a file that exists', () => {
  for (const { path, text } of pages) {
    const base = new URL(path, `file://${root}`);
    for (const [, target] of text.matchAll(/\]\(([^)#:]+)(#[^)]*)?\)/g)) {
      const file = fileURLToPath(new URL(target, base));
      assert.doesNotThrow(() => readFileSync(file), `${path} links ${target}`);
    }
  }
});

const redis = redisForFile(0);

for (const [name, expected] of Object.entries(EXPECTED)) {
  test(`examples/${name} runs and prints what the docs say`, () => {
    const built = `${root}build/examples/${name.replace(/\.ts$/, '.js')}`;
    const env = { ...process.env, REDIS_URL: redis.server.url };
    const result = spawnSync(process.execPath, [built], { encoding: 'utf8', env });
    assert.equal(result.status, 0, result.stderr);
    const match = expected.exec(result.stdout);
    assert.ok(match !== null, result.stdout);
    if (name === 'sketch.ts') assert.ok(Number(match[1]) >= 6, 'never below the 6 counted');
    if (name === 'threads.ts') assert.ok(Number(match[1]) >= 20000, 'never below 2 x 10000');
  });
}
