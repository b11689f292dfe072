import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { hotcount, json, scratch } from '../helpers/cli.js';

const file = scratch('hotcount-top-');
test('reports the most frequent lines of a file with counts, bounds and shares', () => {
  const lines: string[] = [];
  for (let key = 1; key <= 30; key++) for (let i = 0; i < key * 10; i++) lines.push(`key-${key}`);
  lines.sort(() => 0.5 - Math.random());
  const out = json(['top', '-k', '3', file('counts.log', `${lines.join('\n')}\n`)]);
  assert.equal(out.total, lines.length);
  assert.deepEqual(
    out.top.map((row) => [row.key, row.count]),
    [
      ['key-30', 300],
      ['key-29', 290],
      ['key-28', 280],
    ],
  );
  assert.equal(out.top[0].share, 300 / lines.length);
  const table = hotcount(['top', '-k', '2', file('counts.log', `${lines.join('\n')}\n`)]);
  assert.equal(table.status, 0);
  assert.match(table.stdout, /rank\s+key\s+count\s+true count\s+share/);
  assert.match(table.stdout, /1\s+key-30\s+300\s+(exact|≥ \d+)\s+6\.45%/);
  assert.ok(!table.stdout.includes('±'), 'the bound is one-sided: no ± label');
});

test('reads standard input, strips CR, skips empty lines, counts the last line without newline', () => {
  const out = json(['top'], 'a\r\nb\n\n\r\na\nb\nb');
  assert.deepEqual(
    out.top.map((row) => [row.key, row.count]),
    [
      ['b', 3],
      ['a', 2],
    ],
  );
  assert.equal(out.skipped, 2);
  assert.equal(out.skippedBy.emptyLines, 2);
});

test('files are counted one after another: a last line does not join the next file', () => {
  const out = json(['top', file('one.log', 'x\ny'), file('two.log', 'z\nx\n')]);
  assert.deepEqual(out.top.map((row) => [row.key, row.count]).sort(), [
    ['x', 2],
    ['y', 1],
    ['z', 1],
  ]);
});

test('counts one field, split on blanks or on a delimiter', () => {
  const log = '1.2.3.4 GET /a\n5.6.7.8  GET /b\n1.2.3.4 POST /a\nshort\n';
  assert.deepEqual(
    json(['top', '--field', '3'], log).top.map((row) => [row.key, row.count]),
    [
      ['/a', 2],
      ['/b', 1],
    ],
  );
  assert.deepEqual(
    json(['top', '-f', '2', '-d', ','], 'u1,fr,x\nu2,de\nu3,fr\n').top.map((row) => [
      row.key,
      row.count,
    ]),
    [
      ['fr', 2],
      ['de', 1],
    ],
  );
  assert.equal(json(['top', '--field', '3'], log).skippedBy.noField, 1, 'no third field');
});

test('invalid UTF-8 is bytes: distinct keys, shown escaped, exact in JSON', () => {
  const input = Buffer.concat([
    Buffer.from([0xff, 0x41, 10, 0xfe, 0x41, 10, 0xff, 0x41, 10]),
    Buffer.from('\x1b[31mred\n'),
  ]);
  const out = json(['top'], input);
  assert.deepEqual(out.top.map((row) => [row.keyHex ?? row.key, row.count]).sort(), [
    ['\x1b[31mred', 1],
    ['fe41', 1],
    ['ff41', 2],
  ]);
  assert.equal(out.top[0].keyHex, 'ff41');
  const table = hotcount(['top'], input).stdout;
  assert.match(table, /\\xffA/);
  assert.match(table, /\\x1b\[31mred/);
  assert.ok(!table.includes('\x1b'), 'no raw escape sequence reaches the terminal');
});

test('a missing file or a bad flag exits non-zero with a clear message', () => {
  const dir = join(file('x', ''), '..');
  const missing = hotcount(['top', join(dir, 'no-such.log')]);
  assert.equal(missing.status, 1);
  assert.equal(
    missing.stderr,
    `hotcount: cannot read '${join(dir, 'no-such.log')}': no such file or directory\n`,
  );
  for (const args of [
    ['top', '--epsilon', '1e-9'],
    ['top', '-d', ','],
    ['top', '-s', '-f', '2'],
    ['top', '--key-width', '1'],
    ['top', '-k', '0'],
    ['top', '-k', 'ten'],
    ['top', '--field', '-1'],
    ['top', '--epsilon', '2'],
    ['top', '--nope'],
    ['frobnicate'],
  ]) {
    const bad = hotcount(args);
    assert.equal(bad.status, 2, args.join(' '));
    assert.match(bad.stderr, /^hotcount: [\s\S]+\nTry 'hotcount top --help'/);
  }
  const directory = hotcount(['top', dir]);
  assert.equal(directory.status, 1);
  assert.equal(directory.stderr, `hotcount: cannot read '${dir}': is a directory\n`);
});

test('--threads N reports what one thread reports, across files, CRLF, empty lines and cut lines', () => {
  // 60 keys of 60 lengths (so that cuts fall anywhere, inside lines too), key j j + 1 times,
  // in a shuffled order: fewer keys than the tables hold, so both runs count exactly.
  const lines: string[] = [];
  for (let j = 0; j < 60; j++) for (let n = 0; n <= j; n++) lines.push(`k${j}-${'-'.repeat(j)}`);
  for (let i = lines.length - 1, state = 7; i > 0; i--) {
    state = (state * 48271) % 2147483647;
    const other = state % (i + 1);
    [lines[i], lines[other]] = [lines[other], lines[i]];
  }
  const files = [
    file('t1.log', `${lines.slice(0, 600).join('\r\n')}\r\n\n`),
    file('t2.log', ''),
    file('t3.log', lines.slice(600, 1500).join('\n')), // no final newline
    file('t4.log', `\n\n${lines.slice(1500).join('\n')}\n`),
  ];
  const one = json(['top', '-k', '60', ...files]);
  assert.equal(one.total, lines.length);
  assert.equal(one.top[0].count, 60);
  assert.equal(one.top[0].lowerBound, 60);
  for (const threads of ['2', '3', '7']) {
    const many = json(['top', '-k', '60', '--threads', threads, ...files]);
    assert.deepEqual(many.top, one.top, `--threads ${threads}`);
    assert.equal(many.total, one.total);
    assert.equal(many.skipped, one.skipped);
  }
  const field = ['top', '-f', '2', '-d', '-', ...files];
  assert.deepEqual(json([...field, '--threads', '3']).top, json(field).top);
});

test('the same file prints the same bytes every run, whatever the threads do; ties in key order', () => {
  // 97 keys tie at 2,062 (line i is key i % 97), more than a table of 12 (-k 3) holds: which
  // keys a table holds depends on where its piece starts, and which thread counts which piece
  // on the scheduling (issue 34: 9 outputs in 40 runs on Node 26).
  const lines: string[] = [];
  for (let i = 0; i < 200_000; i++) lines.push(`key-${i % 97}`);
  const ties = file('ties.log', `${lines.join('\n')}\n`);
  const args = ['top', '-k', '3', '--threads', '2', ties];
  const first = hotcount(args);
  assert.equal(first.status, 0, first.stderr);
  for (let run = 2; run <= 40; run++)
    assert.equal(hotcount(args).stdout, first.stdout, `run ${run}`);
  // Tied counts in the order sort gives their bytes, in one thread or two; each count is the
  // true one, and a lower bound, if looser than one thread's, is still a bound.
  const one = json(['top', '-k', '3', ties]);
  const two = json(args);
  for (const out of [one, two]) {
    assert.deepEqual(
      out.top.map((row) => [row.key, row.count]),
      [
        ['key-0', 2062],
        ['key-1', 2062],
        ['key-10', 2062],
      ],
    );
  }
  for (const [i, row] of two.top.entries()) {
    assert.ok(row.lowerBound <= one.top[i].lowerBound && row.lowerBound > 0, `${row.key}`);
  }
  // Where the tables hold every key (-k 30: 120 slots for 97 keys), the threads print what one
  // thread prints, byte for byte.
  const held = hotcount(['top', '-k', '30', ties]);
  assert.equal(hotcount(['top', '-k', '30', '--threads', '2', ties]).stdout, held.stdout);
  assert.match(held.stdout, /\bkey-0\s+2,062\s+exact\b/);
});

test('--threads: standard input keeps one reader; bad counts and missing files are refused', () => {
  assert.deepEqual(
    json(['top', '--threads', '4'], 'a\nb\na\n').top.map((row) => [row.key, row.count]),
    [
      ['a', 2],
      ['b', 1],
    ],
  );
  const counts = file('threads.log', 'a\nb\na\n');
  for (const bad of ['0', 'two', '-1']) {
    const result = hotcount(['top', '--threads', bad, counts]);
    assert.equal(result.status, 2, bad);
    assert.match(result.stderr, /--threads/);
  }
  assert.equal(hotcount(['top', '--demo', '--threads', '2']).status, 2);
  const missing = hotcount(['top', '--threads', '2', counts, `${counts}.nope`]);
  assert.equal(missing.status, 1);
  assert.match(missing.stderr, /cannot read '.*nope': no such file/);
});

test('--epsilon sizes the sketch', () => {
  const result = hotcount(['top', '--epsilon', '0.001', '--json'], 'a\n');
  assert.equal(JSON.parse(result.stdout).sketch.width, Math.ceil(Math.E / 0.001));
});

test('the demo counts its generated stream and agrees with an exact Map on the top k', () => {
  const result = hotcount(['top', '--demo', '-k', '10', '--json']);
  assert.equal(result.status, 0, result.stderr);
  const out = JSON.parse(result.stdout);
  assert.equal(out.total, out.demo.events);
  assert.equal(out.demo.topAgree, 10);
  assert.equal(
    out.demo.provenExact,
    out.top.filter(
      (row: { lowerBound: number; upperBound: number }) => row.lowerBound === row.upperBound,
    ).length,
  );
  assert.ok(out.demo.hotcountBytes > 0 && out.demo.hotcountBytes < out.demo.exactMapBytes);
  assert.ok(out.demo.exactMapBytes > 20 * out.sketch.memoryBytes);
  const text = hotcount(['top', '--demo', '-k', '10']);
  assert.equal(text.status, 0, text.stderr);
  const exactRows = text.stdout.split('\n').filter((line) => /^\s+\d+\s.*\sexact\s/.test(line));
  assert.match(
    text.stdout,
    new RegExp(`; ${exactRows.length} of them are exact by their bounds alone`),
  );
});
