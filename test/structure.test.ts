/**
 * The layers of ../shared/STYLE.md, as the code has them: every import between two folders of
 * src/ points down (errors.ts, hash, engine, sketch, then what is built on the sketch, then the
 * public core API, then the integrations, the proxy and the command), no module imports
 * itself back through others, and an integration reaches the core only through its front door
 * (index.ts, or core.ts, the door made for integrations). Read from the TypeScript sources, so a new arrow against the
 * layers, or a circle, fails here before anyone draws it.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const SRC = fileURLToPath(new URL('../../src/', import.meta.url));

/** Each part of src/ and its layer: a part may import from its own layer or any below. */
const LAYERS: Record<string, number> = {
  'errors.ts': 0,
  'clock.ts': 0,
  hash: 1,
  engine: 2,
  sketch: 3,
  quantiles: 3,
  'heavy-hitters': 4,
  limits: 4,
  'index.ts': 5,
  'core.ts': 5,
  redis: 6,
  http: 6,
  hono: 7,
  koa: 7,
  nest: 7,
  flexible: 7,
  proxy: 7,
  cli: 8,
};

function sources(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** The part of src/ a file is in: its folder, or its own name at the top. */
function partOf(file: string): string {
  const [first] = relative(SRC, file).split('/');
  return first;
}

/** The relative modules a source imports or re-exports, statically or not, as source paths. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const found: string[] = [];
  for (const match of text.matchAll(/(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+)'/g)) {
    found.push(resolve(dirname(file), match[1].replace(/\.js$/, '.ts')));
  }
  return found;
}

const files = sources(SRC);
const graph = new Map(files.map((file) => [file, importsOf(file)]));

test('every source file is in a part of src/ that has a layer', () => {
  for (const file of files) {
    assert.ok(partOf(file) in LAYERS, `${relative(SRC, file)}: add its part to LAYERS`);
  }
});

test('every import between parts of src/ points down', () => {
  const upward: string[] = [];
  for (const [file, imports] of graph) {
    for (const target of imports) {
      assert.ok(graph.has(target), `${relative(SRC, file)} imports a missing ${target}`);
      const from = partOf(file);
      const to = partOf(target);
      if (from !== to && LAYERS[to] > LAYERS[from]) {
        upward.push(`${relative(SRC, file)} -> ${relative(SRC, target)}`);
      }
    }
  }
  assert.deepEqual(upward, []);
});

/** The parts below the front door: the core. Every part above it is an integration. */
const FRONT_DOOR = LAYERS['index.ts'];
const DOORS = new Set(['index.ts', 'core.ts']);

test('an integration imports the core only through index.ts or core.ts, never a core file', () => {
  const around: string[] = [];
  for (const [file, imports] of graph) {
    if (LAYERS[partOf(file)] <= FRONT_DOOR) continue;
    for (const target of imports) {
      const to = partOf(target);
      if (LAYERS[to] <= FRONT_DOOR && !DOORS.has(to)) {
        around.push(`${relative(SRC, file)} -> ${relative(SRC, target)}`);
      }
    }
  }
  assert.deepEqual(around, []);
  // The rule holds for folders added later too: a part above the door is an integration.
  assert.ok(
    Object.entries(LAYERS).every(([part, layer]) => layer !== FRONT_DOOR || DOORS.has(part)),
  );
});

test('no module imports itself back through others', () => {
  const state = new Map<string, 'open' | 'done'>();
  const circles: string[] = [];
  const path: string[] = [];
  const visit = (file: string) => {
    state.set(file, 'open');
    path.push(file);
    for (const target of graph.get(file) ?? []) {
      if (state.get(target) === 'open') {
        const circle = path.slice(path.indexOf(target)).concat(target);
        circles.push(circle.map((f) => relative(SRC, f)).join(' -> '));
      } else if (!state.has(target)) {
        visit(target);
      }
    }
    path.pop();
    state.set(file, 'done');
  };
  for (const file of files) if (!state.has(file)) visit(file);
  assert.deepEqual(circles, []);
});
