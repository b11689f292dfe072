import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import fc from 'fast-check';
import { splitFiles } from '../../src/cli/split.js';

const dir = mkdtempSync(join(tmpdir(), 'hotcount-split-'));

test('splitting files covers every byte once, in order, and cuts only at line starts', () => {
  const contentArb = fc
    .array(fc.constantFrom('a', 'bb', 'ccccccc', '\n', '\n', '\r\n', ''), { maxLength: 40 })
    .map((parts) => parts.join(''));
  let run = 0;
  fc.assert(
    fc.property(
      fc.array(contentArb, { minLength: 1, maxLength: 4 }),
      fc.integer({ min: 1, max: 8 }),
      (contents, parts) => {
        run++;
        const files = contents.map((content, i) => {
          const path = join(dir, `f${run}-${i}.log`);
          writeFileSync(path, content);
          return path;
        });
        const sizes = contents.map((content) => Buffer.byteLength(content));
        const lists = splitFiles(files, sizes, parts);
        assert.ok(lists.length <= parts);
        const segments = lists.flat();
        for (const list of lists) assert.ok(list.length > 0, 'no empty part');
        // Every byte once, in order: the segments, concatenated file by file, are the files.
        for (let f = 0; f < files.length; f++) {
          const mine = segments.filter((s) => s.file === files[f]);
          let at = 0;
          for (const s of mine) {
            assert.equal(s.start, at, 'contiguous');
            assert.ok(s.end > s.start, 'not empty');
            at = s.end;
            const bytes = readFileSync(files[f]);
            assert.ok(s.start === 0 || bytes[s.start - 1] === 10, 'starts a line');
          }
          assert.equal(at, sizes[f]);
        }
        assert.deepEqual(
          segments.map((s) => s.file),
          [...segments.map((s) => s.file)].sort((a, b) => files.indexOf(a) - files.indexOf(b)),
        );
      },
    ),
    { numRuns: 200 },
  );
});

test('a long file splits into parts of about the same size', () => {
  const line = 'x'.repeat(99);
  const path = join(dir, 'even.log');
  writeFileSync(path, `${line}\n`.repeat(10_000));
  const lists = splitFiles([path], [1_000_000], 4);
  assert.equal(lists.length, 4);
  for (const [segment] of lists) {
    assert.ok(Math.abs(segment.end - segment.start - 250_000) <= 100);
  }
});
