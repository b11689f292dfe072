/**
 * `hotcount top` on every kind of input and output a shell can hand it, failing as cat and sort
 * do where they fail, and counting what they count where they count.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, closeSync, openSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { dirname } from 'node:path';
import { test } from 'node:test';
import fc from 'fast-check';
import { bash, CLI, hotcount, json, scratch } from '../helpers/cli.js';

const file = scratch('hotcount-io-');
const ten = file('ten.txt', `${Array.from({ length: 10 }, (_, i) => `t${i}`).join('\n')}\n`);
const rows = (out: { top: { key: string; count: number }[] }) =>
  out.top.map((row) => [row.key, row.count]);

test('--threads counts pipes, FIFOs, /proc files and /dev/stdin whole, with the files', () => {
  for (const threads of ['1', '2']) {
    const substituted = bash(`$HOTCOUNT top ${ten} <(seq 1000) --threads ${threads} --json -k 5`);
    assert.equal(substituted.status, 0, substituted.stderr);
    assert.equal(JSON.parse(substituted.stdout).total, 1010, `<(seq 1000), --threads ${threads}`);

    const fifo = `${dirname(ten)}/fifo-${threads}`;
    const viaFifo = bash(
      `mkfifo ${fifo}; seq 500 > ${fifo} & $HOTCOUNT top ${fifo} ${ten} --threads ${threads} --json -k 5`,
    );
    assert.equal(viaFifo.status, 0, viaFifo.stderr);
    assert.equal(JSON.parse(viaFifo.stdout).total, 510, `a FIFO, --threads ${threads}`);

    // A shell's pipe (spawnSync's own stdin is a socket, which /dev/stdin cannot open).
    const stdin = bash(
      `printf 'a\\nb\\na\\n' | $HOTCOUNT top /dev/stdin ${ten} --threads ${threads} --json`,
    );
    assert.equal(stdin.status, 0, stdin.stderr);
    assert.equal(JSON.parse(stdin.stdout).total, 13, `/dev/stdin, --threads ${threads}`);
    assert.deepEqual(rows(JSON.parse(stdin.stdout)).slice(0, 1), [['a', 2]]);

    // Regular, but stat says 0 bytes: read whole.
    const proc = json(['top', '/proc/version', ten, '--threads', threads]);
    assert.equal(proc.total, 11, `/proc/version, --threads ${threads}`);
  }
});

test('an input that never ends a line fails after 16 MiB, in one thread or many', () => {
  for (const threads of ['1', '2']) {
    const zero = hotcount(['top', '/dev/zero', ten, '--threads', threads]);
    assert.equal(zero.status, 1);
    assert.equal(
      zero.stderr,
      "hotcount: cannot read '/dev/zero': a line is longer than 16 MiB, the most hotcount top reads\n",
    );
  }
  const long = file('long.txt', Buffer.alloc(17 * 1024 * 1024, 'x'));
  const messages = ['1', '2'].map((threads) => hotcount(['top', long, ten, '--threads', threads]));
  for (const result of messages) assert.equal(result.status, 1);
  assert.equal(messages[0].stderr, messages[1].stderr, 'one message, whatever the threads');
  assert.match(
    messages[0].stderr,
    /^hotcount: cannot read '.*long\.txt': a line is longer than 16 MiB/,
  );
});

test('an error found while reading reads as one found before: words, not a raw code', () => {
  // Root can read any file, so EACCES cannot be had here; /proc/self/mem stats fine and fails
  // on its first read with EIO.
  for (const threads of ['1', '2']) {
    const result = hotcount(['top', ten, '/proc/self/mem', '--threads', threads]);
    assert.equal(result.status, 1);
    assert.equal(result.stderr, "hotcount: cannot read '/proc/self/mem': i/o error\n");
  }
});

test('standard input is read where it is with --threads, even a regular file behind <', () => {
  const big = file(
    'big-stdin.txt',
    `${Array.from({ length: 5000 }, (_, i) => i % 7).join('\n')}\n`,
  );
  for (const args of [['top'], ['top', '-'], ['top', '-', ten]]) {
    const result = bash(
      `cd ${dirname(ten)} && $HOTCOUNT ${args.join(' ')} --threads 2 --json < ${big}`,
    );
    assert.equal(result.status, 0, result.stderr);
    assert.equal(
      JSON.parse(result.stdout).total,
      5000 + (args.includes(ten) ? 10 : 0),
      args.join(' '),
    );
  }
});

/**
 * `command` run where a file of mode 000 cannot be read: as root, without the capabilities that
 * let root read any file (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH), the same user, so that the
 * checkout and the runtime stay reachable wherever they sit (a 0700 folder included); as anyone
 * else, as is.
 */
const unprivileged = (command: string[]) =>
  process.getuid?.() === 0
    ? ['setpriv', '--bounding-set', '-dac_override,-dac_read_search', ...command]
    : command;

test('a file that cannot be opened fails in one line, in one thread or many, before any input is read', () => {
  const secret = file('secret.txt', 'hidden\n');
  chmodSync(secret, 0o000);
  for (const threads of ['1', '2']) {
    const result = bash(
      `${unprivileged(['$HOTCOUNT']).join(' ')} top ${ten} ${secret} --threads ${threads}`,
    );
    assert.equal(result.status, 1, result.stderr);
    assert.equal(result.stderr, `hotcount: cannot read '${secret}': permission denied\n`);
  }
  // Standard input first, a pipe that never ends: the check comes before any reading, or this
  // would wait for ever (spawnSync's timeout turns that into a failure).
  const [command, ...args] = unprivileged([process.execPath, CLI, 'top', '-', secret]);
  const waiting = spawnSync(command, args, { stdio: ['pipe', 'pipe', 'pipe'], timeout: 20_000 });
  assert.equal(waiting.status, 1);
  assert.match(waiting.stderr.toString(), /cannot read '.*secret\.txt': permission denied/);
});

test('a file name in a message is escaped as keys are: one line, nothing raw', () => {
  const result = hotcount(['top', 'no\nsuch', '\x1b[31mred']);
  assert.equal(result.status, 1);
  assert.equal(result.stderr, "hotcount: cannot read 'no\\x0asuch': no such file or directory\n");
  assert.equal(hotcount([]).status, 2);
  assert.match(hotcount([]).stderr, /^Usage: hotcount <command>/);
});

test('- is standard input, among files too; read once, as cat does', () => {
  assert.deepEqual(rows(json(['top', '-'], '1\n2\n3\n1\n')), [
    ['1', 2],
    ['2', 1],
    ['3', 1],
  ]);
  const mixed = json(['top', ten, '-', ten, '-', '-k', '20'], 'x\nx\n');
  assert.equal(mixed.total, 22, 'ten twice, standard input once');
  assert.equal(new Map(rows(mixed) as [string, number][]).get('x'), 2);
  const piped = bash(`seq 3 | $HOTCOUNT top - --json`);
  assert.equal(piped.status, 0, piped.stderr);
  assert.equal(JSON.parse(piped.stdout).total, 3);
});

test('standard input that is a directory or closed fails as cat fails, exit 1', () => {
  const dir = openSync(dirname(ten), 'r');
  try {
    const result = hotcount(['top'], undefined, { stdio: [dir, 'pipe', 'pipe'] });
    assert.equal(result.status, 1);
    assert.equal(result.stderr, 'hotcount: cannot read standard input: is a directory\n');
  } finally {
    closeSync(dir);
  }
  const closed = bash('$HOTCOUNT top <&-');
  assert.equal(closed.status, 1);
  assert.match(closed.stderr, /^hotcount: cannot read standard input: bad file descriptor/);
  assert.equal(bash('$HOTCOUNT top - <&-').status, 1);
  // /dev/null is an empty input, not a closed one.
  const empty = bash('$HOTCOUNT top --json < /dev/null');
  assert.equal(empty.status, 0, empty.stderr);
  assert.equal(JSON.parse(empty.stdout).total, 0);
});

test('a write error on standard output is one line and exit 1; a closed pipe is a quiet exit 0', () => {
  const full = openSync('/dev/full', 'w');
  try {
    const result = hotcount(['top', ten], undefined, { stdio: ['pipe', full, 'pipe'] });
    assert.equal(result.status, 1);
    assert.equal(
      result.stderr,
      'hotcount: cannot write standard output: no space left on device\n',
    );
  } finally {
    closeSync(full);
  }
  const many = file('many.txt', `${Array.from({ length: 200_000 }, (_, i) => i).join('\n')}\n`);
  const head = bash(
    `$HOTCOUNT top ${many} -k 200000 | head -2; echo "status \${PIPESTATUS[0]}" >&2`,
  );
  assert.equal(head.stdout.split('\n').length, 3);
  assert.equal(head.stderr, 'status 0\n');
});

test('--threads above the number of cores is cut to it, saying so', () => {
  const cores = availableParallelism();
  const result = hotcount(['top', ten, '--threads', String(cores + 5), '--json']);
  assert.equal(result.status, 0);
  assert.equal(
    result.stderr,
    `hotcount: --threads ${cores + 5} is more than the ${cores} cores here; using ${cores}\n`,
  );
  const sorted = (top: { key: string; count: number }[]) => rows({ top }).sort();
  assert.deepEqual(sorted(JSON.parse(result.stdout).top), sorted(json(['top', ten]).top));
  assert.equal(hotcount(['top', ten, '--threads', String(cores)]).stderr, '');
});

test('a delimiter byte that is not UTF-8 is given as \\xHH; a raw one is refused, not ignored', () => {
  const input = Buffer.from([
    ...Buffer.from('a'),
    0xa7,
    ...Buffer.from('fr'),
    10,
    ...Buffer.from('b'),
    0xa7,
    ...Buffer.from('fr'),
    10,
    ...Buffer.from('c'),
    0xa7,
    ...Buffer.from('de'),
    10,
  ]);
  const log = file('latin1.txt', input);
  assert.deepEqual(rows(json(['top', '-d', '\\xa7', '-f', '2', log])), [
    ['fr', 2],
    ['de', 1],
  ]);
  assert.deepEqual(rows(json(['top', '-d', '\\t', '-f', '1'], 'x\ty\nx\tz\n')), [['x', 2]]);
  assert.deepEqual(rows(json(['top', '-d', '\\\\', '-f', '2'], 'a\\b\n')), [['b', 1]]);
  const raw = bash(`$HOTCOUNT top -d $'\\xa7' -f 2 ${log}`);
  assert.equal(raw.status, 2);
  assert.match(raw.stderr, /--delimiter is not valid UTF-8.*-d '\\xa7'/);
  for (const bad of ['\\q', '\\x4', '\\']) {
    const result = hotcount(['top', '-d', bad, '-f', '1', ten]);
    assert.equal(result.status, 2, bad);
    assert.match(result.stderr, /--delimiter has an unknown escape/);
  }
});

test('-d D -f N counts what cut -d D -f N prints (the empty key aside), and -s as cut -s', () => {
  const line = fc
    .array(fc.constantFrom('a', 'b', 'cc', ',', ',', ' '), { maxLength: 8 })
    .map((parts) => parts.join(''));
  fc.assert(
    fc.property(
      fc.array(line, { minLength: 1, maxLength: 40 }),
      fc.integer({ min: 1, max: 3 }),
      fc.boolean(),
      (lines, field, onlyDelimited) => {
        const input = `${lines.join('\n')}\n`;
        const s = onlyDelimited ? ' -s' : '';
        const expected = bash(`cut -d , -f ${field}${s} | grep -v '^$' | sort | uniq -c`, input);
        const truth = new Map<string, number>();
        for (const row of expected.stdout.split('\n').filter((l) => l !== '')) {
          const [, count, key] = /^\s*(\d+) (.*)$/.exec(row) as RegExpExecArray;
          truth.set(key, Number(count));
        }
        const args = ['top', '-d', ',', '-f', String(field), '-k', '100'];
        const out = json(onlyDelimited ? [...args, '-s'] : args, input);
        assert.deepEqual(new Map(rows(out) as [string, number][]), truth);
        const counted = [...truth.values()].reduce((a, b) => a + b, 0);
        assert.equal(out.total, counted);
        assert.equal(out.total + out.skipped, lines.length, 'every line counted or skipped');
      },
    ),
    { numRuns: 12 },
  );
});

test('when every key fits in the table, the counts are sort | uniq -c exactly, even with a tiny sketch', () => {
  const lines: string[] = [];
  for (let key = 0; key < 2000; key++) {
    for (let n = (key * 7919) % 13; n >= 0; n--) lines.push(`key-${key}`);
  }
  const log = file('fits.txt', `${lines.join('\n')}\n`);
  const exact = new Map<string, number>();
  for (const row of bash(`LC_ALL=C sort ${log} | uniq -c`).stdout.trim().split('\n')) {
    const [, count, key] = /^\s*(\d+) (.*)$/.exec(row) as RegExpExecArray;
    exact.set(key, Number(count));
  }
  for (const threads of ['1', '2']) {
    // --epsilon 0.5: 6 x 4 cells for 2,000 keys, so every estimate is far off.
    const out = json(['top', log, '-k', '2000', '--epsilon', '0.5', '--threads', threads]);
    assert.equal(out.top.length, 2000);
    for (const row of out.top) {
      assert.deepEqual(
        [row.count, row.lowerBound, row.upperBound],
        Array(3).fill(exact.get(row.key)),
        row.key,
      );
    }
  }
});

test('long keys are cut with a mark and a way to see them whole; labels say what is true', () => {
  const long = `${'k'.repeat(59)}-one`;
  const other = `${'k'.repeat(59)}-two`;
  const input = `${long}\n${other}\n${other}\nshort\n`;
  const table = hotcount(['top'], input).stdout;
  assert.match(table, new RegExp(`\\s${'k'.repeat(59)}…\\s`));
  assert.match(table, /Keys longer than 60 characters are cut and end in … \(--key-width 0/);
  const whole = hotcount(['top', '--key-width', '0'], input).stdout;
  assert.ok(whole.includes(long) && whole.includes(other));
  assert.doesNotMatch(whole, /…|are cut/);
  const narrow = hotcount(['top', '--key-width', '4'], input).stdout;
  assert.match(narrow, /\skkk…\s/);
  assert.match(narrow, /\sshort\s/.test(narrow) ? /never/ : /sho…/);
  assert.match(table, /count is an upper bound: the true count is at most count/);
});

test('bidi overrides and zero-width characters are escaped in the table, exact in JSON', () => {
  const input = 'user\u202eevil\nzero\u200bwidth\nliteral \\x1b\nreal \x1b\n';
  const table = hotcount(['top'], input).stdout;
  assert.ok(!table.includes('\u202e') && !table.includes('\u200b') && !table.includes('\x1b'));
  for (const shown of [
    'user\\u{202e}evil',
    'zero\\u{200b}width',
    'literal \\\\x1b',
    'real \\x1b',
  ]) {
    assert.ok(table.includes(shown), shown);
  }
  const keys = json(['top'], input)
    .top.map((row) => row.key)
    .sort();
  assert.deepEqual(keys, input.trim().split('\n').sort());
});
