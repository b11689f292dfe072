import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import fc from 'fast-check';
import { BATCH_KEYS } from '../../src/engine/engine.js';
import { type Key, KeyHasher } from '../../src/hash/key-hasher.js';
import { hashKeyWords } from '../../src/hash/secret.js';
import { CountMinSketch, ipKey, SATURATED } from '../../src/index.js';
import { nodeOnly } from '../helpers/runtime.js';

const secret = Uint8Array.from({ length: 16 }, (_, i) => i * 29 + 3);

/** Every kind of key, with the edges where the two engines take different paths. */
const anyKey = fc.oneof(
  fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }),
  fc.integer({ min: 0, max: 40 }),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(-0, 2 ** 31, -(2 ** 31) - 1, 2 ** 32 - 1, 2 ** 53, 0.5),
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 9 }),
  fc.bigInt(),
  fc.uint8Array({ maxLength: 40 }),
  // Client addresses: 4 bytes, or 16 under a prefix's tag.
  fc
    .integer({ min: 0, max: 2 ** 32 - 1 })
    .map((a) => ipKey(`${a >>> 24}.${(a >>> 16) & 255}.${(a >>> 8) & 255}.${a & 255}`) as Key),
  fc
    .tuple(
      fc.array(fc.integer({ min: 0, max: 0xffff }), { minLength: 8, maxLength: 8 }),
      fc.integer({ min: 0, max: 128 }),
    )
    .map(([words, prefix]) => ipKey(words.map((w) => w.toString(16)).join(':'), prefix) as Key),
  // Longer than the engine's scratch area: hashed by the JS reference, counted by the engine.
  fc.constantFrom('é'.repeat(8161), new Uint8Array(16_321).fill(7), 'x'.repeat(8160)),
  // Longer than the engine copies by a loop; with lone surrogates, which must stay raw.
  fc.string({
    unit: fc.integer({ min: 0, max: 0xffff }).map((u) => String.fromCharCode(u)),
    minLength: 18,
    maxLength: 60,
  }),
);

/** Amounts up to 2^31 - 1, often near the limits, so that cells saturate in a short stream. */
const anyAmount = fc.oneof(
  fc.integer({ min: 0, max: 5 }),
  fc.integer({ min: 0, max: SATURATED }),
  fc.constantFrom(SATURATED, SATURATED - 1, 2 ** 30),
);

const op = fc.record({
  kind: fc.constantFrom('increment', 'decrement', 'estimate'),
  key: anyKey,
  by: anyAmount,
});

function pair(options: { conservative: boolean; shared: boolean; width: number; depth: number }) {
  return ['wasm', 'js'].map(
    (engine) => new CountMinSketch({ ...options, secret, engine: engine as 'wasm' | 'js' }),
  );
}

function assertSameState(wasm: CountMinSketch, js: CountMinSketch): void {
  assert.equal(wasm.total, js.total);
  assert.equal(wasm.saturated, js.saturated);
  assert.deepEqual(wasm.counters.cells, js.counters.cells);
  assert.deepEqual(wasm.toBytes(), js.toBytes());
}

for (const shared of [false, true]) {
  for (const conservative of [false, true]) {
    test(`${shared ? 'shared' : 'local'} ${conservative ? 'conservative' : 'plain'}: both engines return the same for every update and hold the same cells, total and bytes`, () => {
      fc.assert(
        fc.property(
          fc.integer({ min: 1, max: 300 }),
          fc.integer({ min: 1, max: conservative && shared ? 8 : 6 }),
          fc.array(op, { maxLength: 60 }),
          (width, depth, ops) => {
            const [wasm, js] = pair({ conservative, shared, width, depth });
            assert.equal(wasm.engine, 'wasm');
            assert.equal(js.engine, 'js');
            for (const { kind, key, by } of ops) {
              if (kind === 'estimate') {
                assert.equal(wasm.estimate(key), js.estimate(key));
              } else if (kind === 'increment' || conservative) {
                assert.equal(wasm.increment(key, by), js.increment(key, by));
              } else {
                assert.equal(wasm.decrement(key, by), js.decrement(key, by));
              }
            }
            assertSameState(wasm, js);
          },
        ),
        { numRuns: 300 },
      );
    });
  }
}

/** The limits' bounds: a floor and a ceiling anywhere, often at or near the extremes. */
const anyBound = fc.oneof(
  fc.integer({ min: -20, max: 60 }),
  fc.integer({ min: -SATURATED, max: SATURATED }),
  fc.constantFrom(-SATURATED, SATURATED, SATURATED - 1, 0),
);

const withinOp = fc.oneof(
  fc.record({
    kind: fc.constant('within' as const),
    key: anyKey,
    floor: anyBound,
    by: anyAmount,
    ceiling: anyBound,
  }),
  fc.record({ kind: fc.constant('increment' as const), key: anyKey, by: anyAmount }),
);

for (const shared of [false, true]) {
  test(`${shared ? 'shared' : 'local'}: raiseWithin, the limits' test and update, returns the same target and leaves the same cells in both engines`, () => {
    const hasher = new KeyHasher(...hashKeyWords(secret));
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 300 }),
        // Past 8 rows a local engine hands the rule to JS: both sides of that edge. A shared
        // conservative sketch deeper than 8 has no wasm engine at all.
        fc.integer({ min: 1, max: shared ? 8 : 10 }),
        fc.array(withinOp, { maxLength: 60 }),
        (width, depth, ops) => {
          const [wasm, js] = pair({ conservative: true, shared, width, depth });
          for (const op of ops) {
            if (op.kind === 'increment') {
              assert.equal(wasm.increment(op.key, op.by), js.increment(op.key, op.by));
              continue;
            }
            hasher.hash(op.key);
            const { h1, h2 } = hasher;
            assert.equal(
              wasm.kernel.raiseWithin(h1, h2, op.floor, op.by, op.ceiling),
              js.kernel.raiseWithin(h1, h2, op.floor, op.by, op.ceiling),
            );
          }
          assertSameState(wasm, js);
        },
      ),
      { numRuns: 300 },
    );
  });
}

test('restored or merged near the limits, both engines go on saturating the same way', () => {
  const [wasm, js] = pair({ conservative: false, shared: false, width: 4, depth: 2 });
  for (const sketch of [wasm, js]) {
    sketch.increment('a', SATURATED - 1);
    sketch.increment('b', 3);
    sketch.decrement('c', SATURATED - 2);
  }
  assertSameState(wasm, js);
  // A sketch read from bytes or merged into must know that its cells are near the limits, or
  // the engine's unchecked fast path would wrap them.
  for (const engine of ['wasm', 'js'] as const) {
    const restored = CountMinSketch.fromBytes(js.toBytes(), { secret, engine });
    const merged = new CountMinSketch({ width: 4, depth: 2, secret, engine }).merge(js);
    for (const sketch of [restored, merged]) {
      assert.equal(sketch.engine, engine);
      assert.equal(sketch.increment('a', 5), SATURATED);
      assert.equal(sketch.decrement('c', 7), -SATURATED);
      assert.equal(sketch.saturated, true);
    }
    assert.deepEqual(restored.counters.cells, merged.counters.cells);
  }
});

test('the hasher that HeavyHitters reads is the reference hash for every key', () => {
  const [k0, k1] = hashKeyWords(secret);
  const reference = new KeyHasher(k0, k1);
  const engine = new CountMinSketch({ secret }).hasher;
  fc.assert(
    fc.property(fc.array(anyKey, { maxLength: 20 }), (keys) => {
      for (const key of keys) {
        reference.hash(key);
        engine.hash(key);
        assert.deepEqual([engine.h1, engine.h2], [reference.h1, reference.h2], String(key));
      }
    }),
  );
  for (const length of [0, 1, 3, 4, 5, 16_320, 16_321, 200_001]) {
    const bytes = new Uint8Array(length + 6).map((_, i) => (i * 131 + 7) & 0xff);
    reference.hashBytes(bytes, 3, 3 + length);
    engine.hashBytes(bytes, 3, 3 + length);
    assert.deepEqual([engine.h1, engine.h2], [reference.h1, reference.h2], `${length} bytes`);
  }
  assert.throws(() => engine.hash(Number.NaN), TypeError);
  assert.throws(() => engine.hash({} as never), TypeError);
});

test('columns are the same in both engines for widths up to 2^28', () => {
  // Above 2^21 columns, g * width no longer fits in 53 bits: the engine must round as JS does.
  for (const [width, depth] of [
    [2 ** 21, 2],
    [2 ** 21 + 1, 2],
    [2 ** 27 - 12_345, 2],
    [2 ** 28 - 1, 1],
  ]) {
    const [wasm, js] = pair({ conservative: false, shared: false, width, depth });
    for (let i = 0; i < 20_000; i++) {
      const key = i % 2 ? i * 2_654_435_761 : `k${i}`;
      assert.equal(wasm.increment(key, 1 + (i % 7)), js.increment(key, 1 + (i % 7)));
    }
    const cells = (s: CountMinSketch) =>
      Buffer.from(
        s.counters.cells.buffer,
        s.counters.cells.byteOffset,
        s.counters.cells.byteLength,
      );
    assert.equal(Buffer.compare(cells(wasm), cells(js)), 0, `width ${width}`);
  }
});

test('at the hashes where f64 rounding moves a column, both engines move it the same way', () => {
  // For a width above 2^21, g * width can round up to a multiple of 2^32 in f64, so that the
  // JS column is one past the exact floor(g * width / 2^32). Find such hashes, and check that
  // the engine lands on the JS column, cell for cell.
  const width = 2 ** 28 - 1;
  const edges: number[] = [];
  for (let g = 0; edges.length < 3 && g < 2 ** 32; g++) {
    const scaled = g * width * 2 ** -32;
    const column = Math.trunc(scaled);
    // Only a product that lands just on a boundary can have been rounded onto it.
    if (scaled - column < 1e-6 && BigInt(column) !== (BigInt(g) * BigInt(width)) >> 32n) {
      edges.push(g);
    }
  }
  assert.equal(edges.length, 3);
  const [wasm, js] = pair({ conservative: false, shared: false, width, depth: 1 });
  for (const g of edges) {
    assert.equal(wasm.kernel.increment(g | 0, 0, 1), js.kernel.increment(g | 0, 0, 1));
    const cell = Math.trunc(g * width * 2 ** -32);
    assert.deepEqual([wasm.counters.cells[cell], js.counters.cells[cell]], [1, 1], `hash ${g}`);
  }
});

const batchKeys = fc.oneof(
  fc
    .array(fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }), { maxLength: 2500 })
    .map((a) => Int32Array.from(a)),
  fc.array(fc.integer({ min: -20, max: 20 }), { maxLength: 2500 }).map((a) => Int32Array.from(a)),
  fc
    .array(
      fc.oneof(
        fc.integer({ min: 0, max: 2 ** 32 - 1 }),
        fc.integer({ min: 2 ** 31 - 3, max: 2 ** 31 + 3 }),
      ),
      { maxLength: 300 },
    )
    .map((a) => Uint32Array.from(a)),
  fc.array(anyKey, { maxLength: 50 }),
);

for (const engine of ['wasm', 'js'] as const) {
  for (const conservative of [false, true]) {
    test(`${engine} ${conservative ? 'conservative' : 'plain'}: incrementMany and estimateMany equal the loop of single calls`, () => {
      fc.assert(
        fc.property(
          batchKeys,
          anyAmount,
          fc.integer({ min: 1, max: 64 }),
          fc.boolean(),
          (keys, by, width, shared) => {
            const options = { width, depth: 4, secret, conservative, shared, engine };
            const batch = new CountMinSketch(options);
            const single = new CountMinSketch({ ...options, engine: 'js' });
            const loop = (f: (key: Key) => number) =>
              Int32Array.from(Array.from(keys as ArrayLike<Key>, f));
            assert.deepEqual(
              batch.incrementMany(keys, by),
              loop((key) => single.increment(key, by)),
            );
            const out = new Int32Array(keys.length + 3).fill(-1);
            assert.equal(batch.estimateMany(keys, out), out);
            assert.deepEqual(
              out.subarray(0, keys.length),
              loop((key) => single.estimate(key)),
            );
            assert.deepEqual(
              Array.from(out.subarray(keys.length)),
              [-1, -1, -1],
              'out beyond keys is untouched',
            );
            assertSameState(batch, single);
          },
        ),
        { numRuns: 150 },
      );
    });
  }
}

test('batches of every length, across the engine chunk, equal the single calls', () => {
  for (const n of [
    0,
    1,
    7,
    8,
    9,
    15,
    16,
    17,
    BATCH_KEYS - 1,
    BATCH_KEYS,
    BATCH_KEYS + 1,
    3 * BATCH_KEYS + 5,
  ]) {
    const keys = Int32Array.from({ length: n }, (_, i) => (i * 7919) % 97);
    const wasm = new CountMinSketch({ width: 50, depth: 3, secret });
    const js = new CountMinSketch({ width: 50, depth: 3, secret, engine: 'js' });
    assert.deepEqual(
      wasm.incrementMany(keys, 2),
      Int32Array.from(keys, (k) => js.increment(k, 2)),
      `${n} keys`,
    );
    assertSameState(wasm, js);
  }
});

test('batch calls refuse bad input and count nothing of a rejected batch', () => {
  const sketch = new CountMinSketch({ secret });
  assert.throws(() => sketch.incrementMany(new Float64Array(3) as never), {
    name: 'TypeError',
    message: /keys/,
  });
  assert.throws(() => sketch.incrementMany('abc' as never), { name: 'TypeError', message: /keys/ });
  assert.throws(() => sketch.incrementMany(new Int32Array(4), -1), {
    name: 'RangeError',
    message: /by/,
  });
  assert.throws(() => sketch.estimateMany(new Int32Array(4), new Int32Array(3)), {
    name: 'RangeError',
    message: /out/,
  });
  assert.throws(() => sketch.estimateMany(new Int32Array(4), [0, 0, 0, 0] as never), {
    name: 'TypeError',
    message: /out/,
  });
  assert.throws(() => sketch.incrementMany(['a', 'b', Number.NaN, 'c']), {
    name: 'TypeError',
    message: /keys\[2\]/,
  });
  assert.equal(sketch.total, 0);
  assert.equal(sketch.estimate('a'), 0);
});

test('one shared sketch, attached by both engines, is one sketch', () => {
  const sketch = new CountMinSketch({
    width: 128,
    depth: 4,
    secret,
    shared: true,
    conservative: true,
  });
  const js = CountMinSketch.attach(sketch.handle, { engine: 'js' });
  const wasm = CountMinSketch.attach(sketch.handle);
  assert.deepEqual([sketch.engine, js.engine, wasm.engine], ['wasm', 'js', 'wasm']);
  const reference = new CountMinSketch({
    width: 128,
    depth: 4,
    secret,
    conservative: true,
    engine: 'js',
  });
  for (let i = 0; i < 5000; i++) {
    const key = i % 3 === 0 ? `s${i % 50}` : i % 61;
    const expected = reference.increment(key, i % 4);
    assert.equal((i % 2 ? js : wasm).increment(key, i % 4), expected);
  }
  assert.equal(sketch.total, reference.total);
  assert.deepEqual(sketch.counters.cells, reference.counters.cells);
});

test('the engine option is checked, and deep shared conservative sketches run on the JS rule', () => {
  assert.throws(() => new CountMinSketch({ engine: 'c' as never }), {
    name: 'RangeError',
    message: /engine/,
  });
  const deep = new CountMinSketch({ width: 64, depth: 9, shared: true, conservative: true });
  assert.equal(deep.engine, 'js');
  assert.equal(CountMinSketch.attach(deep.handle).engine, 'js');
  assert.throws(
    () =>
      new CountMinSketch({ width: 64, depth: 9, shared: true, conservative: true, engine: 'wasm' }),
    { name: 'RangeError', message: /depth up to 8/ },
  );
  assert.equal(new CountMinSketch({ width: 64, depth: 9, conservative: true }).engine, 'wasm');
  assert.throws(() => CountMinSketch.attach(deep.handle, { engin: 'js' } as never), TypeError);
});

test('under --jitless there is no WebAssembly: sketches run on the JS engine and say so', {
  skip: nodeOnly('--jitless is a V8 flag of the node command'),
}, () => {
  const url = new URL('../../src/index.js', import.meta.url).href;
  const script = `
    const { CountMinSketch } = await import(${JSON.stringify(url)});
    const sketch = new CountMinSketch({ width: 100, depth: 3, shared: true });
    sketch.incrementMany(Int32Array.of(1, 2, 2), 5);
    let refused = '';
    try { new CountMinSketch({ engine: 'wasm' }); } catch (error) { refused = error.name; }
    console.log(sketch.engine, sketch.estimate(2), sketch.memoryBytes, refused);`;
  const result = spawnSync(process.execPath, ['--jitless', '--input-type=module', '-e', script], {
    encoding: 'utf8',
  });
  assert.equal(result.status, 0, result.stderr);
  assert.equal(result.stdout, `js 10 ${100 * 3 * 4 + 4160} RangeError\n`);
});

test('past the WebAssembly memories a process can hold, sketches run on the JS engine instead of failing', {
  skip: nodeOnly(
    "how many WebAssembly memories a process holds is its runtime's: Deno's V8 held 100,000 without failing, Bun's JavaScriptCore slowed to minutes before",
  ),
}, () => {
  // V8 reserves ~10 GiB of address space per WebAssembly.Memory; about 13k fit on a 47-bit
  // address space. Past that, a default sketch falls back to the JS engine, works the same,
  // and one that asks for 'wasm' gets a RangeError that says why.
  const url = new URL('../../src/index.js', import.meta.url).href;
  const script = `
    const { CountMinSketch } = await import(${JSON.stringify(url)});
    const held = [];
    while (held.length < 100_000) {
      const sketch = new CountMinSketch({ width: 1, depth: 1 });
      held.push(sketch);
      if (sketch.engine === 'js') break;
    }
    const last = held[held.length - 1];
    last.increment('a', 3);
    const shared = new CountMinSketch({ width: 4, depth: 2, shared: true });
    shared.increment('b', 2);
    let refused = '';
    try { new CountMinSketch({ engine: 'wasm' }); } catch (error) { refused = error.message; }
    console.log(JSON.stringify({ count: held.length, engine: last.engine, a: last.estimate('a'),
      shared: [shared.engine, shared.estimate('b'), CountMinSketch.attach(shared.handle).engine], refused }));`;
  const result = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    encoding: 'utf8',
  });
  assert.equal(result.status, 0, result.stderr);
  const out = JSON.parse(result.stdout);
  assert.ok(out.count > 1000 && out.count < 100_000, `fell back after ${out.count} sketches`);
  assert.equal(out.engine, 'js');
  assert.equal(out.a, 3);
  assert.deepEqual(out.shared, ['js', 2, 'js']);
  assert.match(out.refused, /could not get a WebAssembly.Memory/);
});

test("attach refuses a handle whose memory is not its buffer's, before touching the sketch", () => {
  const sketch = new CountMinSketch({ width: 100, depth: 3, secret, shared: true });
  const { buffer, memory } = sketch.handle;
  const pages = buffer.byteLength / 65536;
  const header = () => Array.from(new Int32Array(buffer, 0, 15));
  const before = header();
  for (const shared of [true, false]) {
    const copy = new WebAssembly.Memory({ initial: pages, maximum: pages, shared });
    new Uint8Array(copy.buffer).set(new Uint8Array(buffer));
    for (const engine of ['wasm', 'js'] as const) {
      assert.throws(
        () => CountMinSketch.attach({ ...sketch.handle, memory: copy }, { engine }),
        shared
          ? { name: 'RangeError', message: /handle.memory is not the memory of handle.buffer/ }
          : { name: 'TypeError', message: /handle.memory/ },
      );
    }
  }
  assert.deepEqual(header(), before, 'a refused attach changes nothing the sketch counts');
  const attached = CountMinSketch.attach({ ...sketch.handle, memory });
  attached.increment('k', 5);
  assert.equal(sketch.estimate('k'), 5);
});
