import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import fc from 'fast-check';
import { engineAvailable, WasmKeyHasher } from '../../src/engine/engine.js';
import { KeyHasher } from '../../src/hash/key-hasher.js';

const anyKey = fc.oneof(
  fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(-0, 2 ** 31, -(2 ** 31) - 1, 2 ** 53, 0.5),
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 9 }),
  fc.bigInt(),
  fc.uint8Array({ maxLength: 40 }),
);

test('the engine hashes every kind of key bit for bit as the JS reference', () => {
  fc.assert(
    fc.property(fc.integer(), fc.integer(), fc.array(anyKey, { maxLength: 20 }), (k0, k1, keys) => {
      const reference = new KeyHasher(k0, k1);
      const engine = new WasmKeyHasher(k0, k1);
      for (const key of keys) {
        reference.hash(key);
        engine.hash(key);
        assert.deepEqual([engine.h1, engine.h2], [reference.h1, reference.h2], String(key));
      }
    }),
    { numRuns: 500 },
  );
});

test('byte ranges and keys longer than the engine memory hash as in JS', () => {
  const reference = new KeyHasher(0x01234567, -0x76543211);
  const engine = new WasmKeyHasher(0x01234567, -0x76543211);
  for (const length of [0, 1, 2, 3, 4, 5, 7, 8, 65_520, 65_536, 200_001]) {
    const bytes = new Uint8Array(length + 6).map((_, i) => (i * 131 + 7) & 0xff);
    reference.hashBytes(bytes, 3, 3 + length);
    engine.hashBytes(bytes, 3, 3 + length);
    assert.deepEqual([engine.h1, engine.h2], [reference.h1, reference.h2], `${length} bytes`);
    const text = 'é'.repeat(length >> 1);
    reference.hash(text);
    engine.hash(text);
    assert.deepEqual([engine.h1, engine.h2], [reference.h1, reference.h2], `${length >> 1} units`);
  }
  assert.throws(() => engine.hash(Number.NaN), TypeError);
  assert.throws(() => engine.hash({} as never), TypeError);
});

test('under --jitless there is no WebAssembly, and the engine says so', () => {
  assert.equal(engineAvailable(), true);
  const url = new URL('../../src/engine/engine.js', import.meta.url).href;
  const result = spawnSync(
    process.execPath,
    [
      '--jitless',
      '--input-type=module',
      '-e',
      `import(${JSON.stringify(url)}).then((m) => console.log(m.engineAvailable()))`,
    ],
    { encoding: 'utf8' },
  );
  assert.equal(result.status, 0, result.stderr);
  assert.equal(result.stdout, 'false\n');
});
