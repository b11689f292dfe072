/**
 * The README's examples are files in examples/, run here as a user runs them: every ```ts block
 * of the README that imports something is one of them, word for word.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));
const readme = readFileSync(`${root}README.md`, 'utf8');
const blocks = [...readme.matchAll(/```ts\n([\s\S]*?)```/g)].map((match) => match[1]);

/** What each example prints, as a user would check it. */
const EXPECTED: Record<string, RegExp> = {
  'sketch.ts': /^customer-42: (\d+), error bound 0\.0010\n$/,
  'threads.ts': /^customer-7: (\d+) of 200000 requests\n$/,
  'heavy-hitters.ts':
    /^customer-1: 1000 \(true count in \[1000, 1000\]\)\ncustomer-2: 500 .*\ncustomer-3: 333 .*\n$/,
  'express.ts': /^200 200 429 200\n$/,
  'fastify.ts': /^200 200 429 200 429 200 200 200\n$/,
  'http.ts': /^200 200 429\n$/,
  'limits.ts':
    /^ok, ok, ok, ok, ok, 429 \(retry in \d+ ms\), 429 \(retry in \d+ ms\)\nthird: 503\nin progress after release: 0\n$/,
};

test('every README block that imports is an example file, word for word', () => {
  const examples = blocks.filter((block) => /^import /m.test(block));
  assert.ok(examples.length >= 3);
  for (const block of examples) {
    const name = /^\/\/ examples\/([\w-]+\.ts)\n/.exec(block)?.[1];
    assert.ok(name !== undefined, `a README block that imports names its file:\n${block}`);
    assert.equal(block, readFileSync(`${root}examples/${name}`, 'utf8'), name);
  }
  const files = readdirSync(`${root}examples`).sort();
  assert.deepEqual(files, Object.keys(EXPECTED).sort(), 'each example is checked below');
});

for (const [name, expected] of Object.entries(EXPECTED)) {
  test(`examples/${name} runs and prints what the README says`, () => {
    const built = `${root}build/examples/${name.replace(/\.ts$/, '.js')}`;
    const result = spawnSync(process.execPath, [built], { encoding: 'utf8' });
    assert.equal(result.status, 0, result.stderr);
    const match = expected.exec(result.stdout);
    assert.ok(match !== null, result.stdout);
    if (name === 'sketch.ts') assert.ok(Number(match[1]) >= 6, 'never below the 6 counted');
    if (name === 'threads.ts') assert.ok(Number(match[1]) >= 20000, 'never below 2 x 10000');
  });
}
