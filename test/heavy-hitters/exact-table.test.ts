import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import type { Key } from '../../src/hash/key-hasher.js';
import { ExactTable } from '../../src/heavy-hitters/exact-table.js';

/** A key's identity, as the table must see it: its kind and its content. */
function name(key: Key): string {
  return key instanceof Uint8Array ? `bytes:${key.join(',')}` : `${typeof key}:${String(key)}`;
}

interface ModelEntry {
  key: Key;
  id: number;
  base: number;
  exact: number;
  upper: number;
}

/**
 * The old table's semantics in the plainest terms: a Map by key, and the entries sorted by
 * upper bound, the first of which is the one to evict.
 */
class Model {
  readonly entries = new Map<string, ModelEntry>();
  constructor(readonly capacity: number) {}

  sorted(): ModelEntry[] {
    return [...this.entries.values()].sort((a, b) => a.upper - b.upper);
  }

  smallestUpper(): number {
    return this.sorted()[0].upper;
  }
}

/** Everything the table lists, by key name. */
function listed(table: ExactTable): Map<string, Omit<ModelEntry, 'id'>> {
  const rows = new Map<string, Omit<ModelEntry, 'id'>>();
  for (let i = 0; i < table.size; i++) {
    const key = table.key(i);
    assert.ok(!rows.has(name(key)), `key ${name(key)} listed twice`);
    rows.set(name(key), { key, base: table.base(i), exact: table.exact(i), upper: table.upper(i) });
  }
  return rows;
}

/** Finds `key` as `add` does, or as `addBytes` does from inside a larger buffer. */
function find(table: ExactTable, id: number, key: Key, asRange: boolean): number {
  if (!(key instanceof Uint8Array) || !asRange) return table.find(id, key);
  const buffer = new Uint8Array(key.length + 7).fill(0xaa);
  buffer.set(key, 3);
  return table.findBytes(id, buffer, 3, 3 + key.length);
}

function agree(table: ExactTable, model: Model): void {
  assert.equal(table.size, model.entries.size);
  const rows = listed(table);
  assert.equal(rows.size, model.entries.size);
  for (const [keyName, entry] of model.entries) {
    const row = rows.get(keyName);
    assert.ok(row !== undefined, `${keyName} is in the model, not in the table`);
    assert.equal(name(row.key), keyName);
    assert.equal(typeof row.key, typeof entry.key);
    assert.equal(row.base, entry.base);
    assert.equal(row.exact, entry.exact);
    assert.equal(row.upper, entry.upper);
    assert.ok(find(table, entry.id, entry.key, false) >= 0);
    assert.ok(find(table, entry.id, entry.key, true) >= 0);
  }
  if (model.entries.size > 0) assert.equal(table.smallestUpper(), model.smallestUpper());
}

/** Long byte keys that differ only in their last bytes, some of one length. */
const longBytes = fc
  .tuple(fc.integer({ min: 100, max: 1000 }), fc.uint8Array({ maxLength: 2 }))
  .map(([length, tail]) => {
    const key = new Uint8Array(length + tail.length).fill(0x37);
    key.set(tail, length);
    return key;
  });

/**
 * Keys of every kind (with ids from a small range, so that many keys share one and the table
 * must tell them apart by the key itself), and byte keys long enough to fill the arena, so
 * that it grows and compacts.
 */
const keyPool = fc.uniqueArray(
  fc.oneof(
    fc.string({ maxLength: 3 }),
    fc.integer({ min: -5, max: 5 }),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.bigInt({ min: -5n, max: 5n }),
    fc.uint8Array({ maxLength: 3 }),
    fc.uint8Array({ minLength: 100, maxLength: 1000, size: 'max' }),
    longBytes,
  ),
  { minLength: 1, maxLength: 60, selector: name, size: 'max' },
);

const operation = fc.oneof(
  {
    weight: 20,
    arbitrary: fc.record({
      kind: fc.constant('add' as const),
      key: fc.nat(),
      base: fc.nat(30),
      by: fc.nat(30),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('clear' as const) }) },
);

test('agrees with a Map and a sorted array: same entries, same counts, evicts a smallest', () => {
  fc.assert(
    fc.property(
      keyPool,
      fc.array(fc.integer({ min: -3, max: 3 }), { minLength: 1, maxLength: 60 }),
      fc.integer({ min: 1, max: 40 }),
      fc.array(operation, { maxLength: 400, size: 'max' }),
      fc.boolean(),
      (keys, idOf, capacity, operations, asRange) => {
        const table = new ExactTable(capacity);
        const model = new Model(capacity);
        const id = (i: number) => (idOf[i % idOf.length] * 0x12345) >> 1;
        for (const op of operations) {
          if (op.kind === 'clear') {
            table.clear();
            model.entries.clear();
            continue;
          }
          const i = op.key % keys.length;
          const key = keys[i];
          const found = model.entries.get(name(key));
          const slot = find(table, id(i), key, asRange);
          if (found !== undefined) {
            assert.ok(slot >= 0, `${name(key)} is held but not found`);
            table.bump(slot, op.by);
            found.exact += op.by;
            found.upper += op.by;
          } else {
            assert.equal(slot, -1, `${name(key)} is not held but found`);
            const full = model.entries.size === capacity;
            const smallest = full ? model.smallestUpper() : 0;
            if (key instanceof Uint8Array && asRange) {
              const buffer = new Uint8Array(key.length + 4);
              buffer.set(key, 2);
              table.insertBytes(id(i), buffer, 2, 2 + key.length, op.base, op.by);
              buffer.fill(0); // the table holds a copy
            } else {
              table.insert(id(i), key, op.base, op.by);
            }
            if (full) {
              // Ties make any smallest entry a right choice: follow the table's, once checked.
              const kept = listed(table);
              const evicted = [...model.entries.keys()].filter((keyName) => !kept.has(keyName));
              assert.equal(evicted.length, 1, 'one entry evicted');
              assert.equal(model.entries.get(evicted[0])?.upper, smallest, 'a smallest evicted');
              model.entries.delete(evicted[0]);
            }
            model.entries.set(name(key), {
              key,
              id: id(i),
              base: op.base,
              exact: op.by,
              upper: op.base + op.by,
            });
          }
          agree(table, model);
        }
      },
    ),
    { numRuns: 300 },
  );
});

test('the string "1", the number 1, the bigint 1n and the bytes [0x31] are four keys, even under one id', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: -1000, max: 1000 }),
      fc.shuffledSubarray([0, 1, 2, 3], { minLength: 4, maxLength: 4 }),
      fc.array(fc.integer({ min: 0, max: 3 }), { maxLength: 40 }),
      fc.integer({ min: -(2 ** 30), max: 2 ** 30 - 1 }),
      (value, order, bumps, id) => {
        const keys: Key[] = [String(value), value, BigInt(value), Buffer.from(String(value))];
        const table = new ExactTable(4);
        const counts = [0, 0, 0, 0];
        for (const k of order) {
          assert.equal(table.find(id, keys[k]), -1, `${name(keys[k])} found before it entered`);
          table.insert(id, keys[k], 0, 1);
          counts[k] = 1;
        }
        for (const k of bumps) {
          table.bump(table.find(id, keys[k]), 1);
          counts[k]++;
        }
        const slots = keys.map((key) => table.find(id, key));
        assert.equal(new Set(slots).size, 4, 'four slots');
        const text = Buffer.from(`x${value}x`);
        assert.equal(table.findBytes(id, text, 1, text.length - 1), slots[3]);
        const rows = listed(table);
        for (let k = 0; k < 4; k++) assert.equal(rows.get(name(keys[k]))?.exact, counts[k]);
      },
    ),
  );
});

test('keys come back as fresh copies: changing one changes nothing held', () => {
  const table = new ExactTable(2);
  table.insert(1, Uint8Array.of(1, 2, 3), 0, 1);
  const key = table.key(0) as Uint8Array;
  assert.equal(Object.getPrototypeOf(key), Uint8Array.prototype);
  key.fill(9);
  assert.deepEqual(table.key(0), Uint8Array.of(1, 2, 3));
  assert.notEqual(table.key(0), table.key(0));
  assert.equal(table.find(1, Uint8Array.of(1, 2, 3)), 0);
});

test('a large capacity allocates nothing until keys arrive to fill it', () => {
  const before = process.memoryUsage().arrayBuffers;
  const table = new ExactTable(2 ** 24);
  for (let i = 0; i < 1000; i++) table.insert(i, Buffer.from(`key ${i}`), 0, 1);
  const grownBytes = process.memoryUsage().arrayBuffers - before;
  assert.equal(table.size, 1000);
  // 2^24 slots would be hundreds of MiB; 1000 entries are tens of KiB (plus garbage of growth).
  assert.ok(grownBytes < 1024 * 1024, `${grownBytes} bytes for 1000 entries`);
});
