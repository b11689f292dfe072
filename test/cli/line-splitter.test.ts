import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { FIELD, FieldPicker, NO_DELIMITER } from '../../src/cli/fields.js';
import { LineSplitter } from '../../src/cli/line-splitter.js';

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
