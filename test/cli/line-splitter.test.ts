import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { FIELD, FieldPicker, NO_DELIMITER } from '../../src/cli/field-picker.js';
import { HashedLineSplitter } from '../../src/cli/hashed-line-splitter.js';
import { LineSplitter } from '../../src/cli/line-splitter.js';
import { ChunkHasher } from '../../src/engine/chunk-hasher.js';
import { KeyHasher } from '../../src/hash/key-hasher.js';
import { hashKeyWords } from '../../src/hash/secret.js';

function splitAll(input: Uint8Array, cuts: number[]): string[] {
  const lines: string[] = [];
  const splitter = new LineSplitter((bytes, start, end) =>
    lines.push(Buffer.from(bytes.subarray(start, end)).toString('latin1')),
  );
  let at = 0;
  for (const cut of [...cuts.map((c) => c % (input.length + 1))].sort((a, b) => a - b)) {
    splitter.push(input.subarray(at, cut));
    at = cut;
  }
  splitter.push(input.subarray(at));
  splitter.end();
  return lines;
}

test('lines are the same wherever the chunks are cut; CR stripped, empty lines skipped', () => {
  const byteArb = fc.constantFrom(10, 13, 97, 98, 0xff, 32);
  fc.assert(
    fc.property(
      fc
        .uint8Array({ maxLength: 200 })
        .chain((raw) => fc.tuple(fc.constant(raw), fc.array(byteArb, { maxLength: 100 }))),
      fc.array(fc.nat(), { maxLength: 10 }),
      ([, bytes], cuts) => {
        const input = Uint8Array.from(bytes);
        const expected = Buffer.from(input)
          .toString('latin1')
          .split('\n')
          .map((line) => (line.endsWith('\r') ? line.slice(0, -1) : line))
          .filter((line) => line !== '');
        assert.deepEqual(splitAll(input, cuts), expected);
      },
    ),
  );
});

test('a line longer than the limit is an error, not a silent truncation', () => {
  const splitter = new LineSplitter(() => {});
  const chunk = new Uint8Array(1024 * 1024).fill(97);
  assert.throws(() => {
    for (let i = 0; i < 17; i++) splitter.push(chunk);
  }, RangeError);
});

test('fields split on blanks like awk, or on a delimiter like cut -d D -f N (and -s)', () => {
  const pick = (line: string, field: number, delimiter = '', onlyDelimited = false) => {
    const picker = new FieldPicker(field, new Uint8Array(Buffer.from(delimiter)), onlyDelimited);
    const bytes = Buffer.from(line);
    const found = picker.pick(bytes, 0, bytes.length);
    if (found === NO_DELIMITER) return 'skip: no delimiter';
    return found === FIELD ? bytes.subarray(picker.start, picker.end).toString() : undefined;
  };
  /** What cut -d D -f N prints: a line without D whole (or nothing with -s), else field N. */
  const cut = (line: string, field: number, delimiter: string, onlyDelimited = false) => {
    const fields = line.split(delimiter);
    if (fields.length === 1) return onlyDelimited ? 'skip: no delimiter' : line;
    return fields[field - 1];
  };
  fc.assert(
    fc.property(
      fc.array(fc.constantFrom('a', 'bb', ' ', '\t', ',', '::'), { maxLength: 12 }),
      fc.integer({ min: 1, max: 5 }),
      (parts, field) => {
        const line = parts.join('');
        assert.equal(pick(line, field), line.split(/[ \t]+/).filter((f) => f !== '')[field - 1]);
        assert.equal(pick(line, field, ','), cut(line, field, ','));
        assert.equal(pick(line, field, ',', true), cut(line, field, ',', true));
        assert.equal(pick(line, field, '::'), cut(line, field, '::'));
      },
    ),
  );
});

test("lines found and hashed by the engine are the JS splitter's lines, with the reference hash", () => {
  const secret = new Uint8Array(16).fill(5);
  const [k0, k1] = hashKeyWords(secret);
  const reference = new KeyHasher(k0, k1);
  const byteArb = fc.oneof(fc.constantFrom(10, 13, 10, 97), fc.integer({ min: 0, max: 255 }));
  fc.assert(
    fc.property(
      fc.array(byteArb, { maxLength: 300 }).map((a) => Uint8Array.from(a)),
      fc.array(fc.nat(), { maxLength: 6 }),
      fc.oneof(fc.constant(1024), fc.integer({ min: 1, max: 64 })),
      (input, cuts, capacity) => {
        // Chunks within the capacity go through the engine; a small capacity sends some the
        // JS way, so that lines cross from one path to the other.
        const hasher = ChunkHasher.create(k0, k1, capacity) as ChunkHasher;
        const seen: string[] = [];
        const splitter = new HashedLineSplitter(hasher, (bytes, start, end, h1, h2) => {
          reference.hashBytes(bytes, start, end);
          assert.deepEqual([h1, h2], [reference.h1, reference.h2]);
          seen.push(Buffer.from(bytes.subarray(start, end)).toString('latin1'));
        });
        const push = (chunk: Uint8Array) => {
          hasher.load(chunk);
          splitter.push(chunk);
        };
        let at = 0;
        for (const cut of [...cuts.map((c) => c % (input.length + 1))].sort((a, b) => a - b)) {
          push(input.subarray(at, cut));
          at = cut;
        }
        push(input.subarray(at));
        splitter.end();
        const plain = new LineSplitter(() => {});
        plain.push(input);
        plain.end();
        assert.deepEqual(seen, splitAll(input, []));
        assert.deepEqual([splitter.lines, splitter.skipped], [plain.lines, plain.skipped]);
      },
    ),
    { numRuns: 1000 },
  );
});

test('the engine hands over lines in rounds when a chunk holds more than a round of records', () => {
  const secret = new Uint8Array(16).fill(6);
  const [k0, k1] = hashKeyWords(secret);
  const hasher = ChunkHasher.create(k0, k1, 1 << 20) as ChunkHasher;
  const input = Buffer.from(
    Array.from({ length: 10_000 }, (_, i) => (i % 3 ? `l${i % 7}` : '')).join('\n'),
  );
  let lines = 0;
  const splitter = new HashedLineSplitter(hasher, () => lines++);
  hasher.load(input);
  splitter.push(input);
  splitter.end();
  assert.equal(lines, 6666);
  assert.deepEqual([splitter.lines, splitter.skipped], [6666, 3333]);
});
