/**
 * The numbers the engine shares with the TypeScript: the memory layouts and the key tags, read
 * from their TypeScript sources, so that they are written once.
 *
 * The generator runs before TypeScript is compiled (npm run build: the engine first, then tsc),
 * so there is no JS to import. Both sources are tiny and import nothing, so each is transpiled
 * alone with the `typescript` devDependency and imported from a data: URL. A data: URL module
 * cannot resolve a relative import, hence the rule that both files stay import-free; the loader
 * checks it and says so, rather than failing with a resolution error. The engine still checks
 * its layout globals against src/engine/layout.ts at load (src/engine/engine.ts), and the
 * engine's tests compare its hashes with src/hash/key-hasher.ts.
 */
import { readFileSync } from 'node:fs';
import ts from 'typescript';

/** A TypeScript source of src/ with no imports, transpiled and imported as a module. */
async function loadSource(path) {
  const url = new URL(`../../${path}`, import.meta.url);
  const source = readFileSync(url, 'utf8');
  const imports = ts.preProcessFile(source, true, true).importedFiles.map((file) => file.fileName);
  if (imports.length > 0) {
    throw new Error(
      `${path} must import nothing: tools/engine/layout.mjs loads it on its own, before ` +
        `TypeScript is compiled, and cannot resolve ${imports.join(', ')}. Move what it needs ` +
        'into it, or what needs an import out of it.',
    );
  }
  const { outputText } = ts.transpileModule(source, {
    fileName: path,
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
  });
  return import(`data:text/javascript;base64,${Buffer.from(outputText).toString('base64')}`);
}

const layouts = await loadSource('src/engine/layout.ts');
const tags = await loadSource('src/hash/key-tags.ts');

/**
 * Local memory, from the sketch's origin (a multiple of 64: several sketches of one shape may
 * share a memory, each at an origin of its own; see count-min.ts, group):  0-7 the last key's
 * hash (h1, h2) | 8 saturated (0/1) | 12 volume (see LocalCounters) | 16-23 total (f64) | 24,
 * 28 what hashLines reports | 64-119 a window step's slots (STEP) | 128-16383 scratch: a
 * key's bytes from 128, or a batch of up to 1024 int keys from 8192 | 16384- the cells, row
 * after row. LOCAL_LAYOUT of src/engine/layout.ts.
 */
export const LOCAL = layouts.LOCAL_LAYOUT;
/**
 * A window step's slots (src/limits/window-step.ts), doubles at these offsets from the step's
 * address: the rule (floor .. add), then what the step read (previous, ceiling). STEP_LAYOUT.
 */
export const STEP = layouts.STEP_LAYOUT;
/** Shared memory: the layout of src/sketch/shared-counters.ts (its version 2). SHARED_LAYOUT. */
export const SHARED = layouts.SHARED_LAYOUT;

/** The key tags of the two key forms the engine hashes by itself (numbers); see key-tags.ts. */
export const TAG_INT32 = tags.TAG_INT32;
export const TAG_FLOAT = tags.TAG_FLOAT;

/**
 * The value at which a counter saturates and sticks: 2^31 - 1. Repeated here, not read: its
 * original, SATURATED of src/sketch/counters.ts, lives in a file with imports (the layout, the
 * aging scale), which this loader cannot transpile alone; it is also no choice of ours but the
 * int32 limit, and the engine's tests compare the two engines' saturated cells.
 */
export const SATURATED = 0x7fffffff;

for (const [name, value] of Object.entries({ LOCAL, STEP, SHARED, TAG_INT32, TAG_FLOAT })) {
  if (value === undefined) throw new Error(`tools/engine/layout.mjs: ${name} was not found`);
}
