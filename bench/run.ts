/**
 * `npm run bench [-- --full]`: runs every suite, prints the results and writes them into
 * bench/REPORT.md, between the markers below (text outside the markers is kept).
 *
 * Default: 1M keys, 10M events, a few minutes on 2 cores. `--full`: 100M events.
 * `--only NAME` runs one suite and prints its rows without touching the report (for work on
 * that suite; the report always holds a whole run). `--base REF` gives the suite before-after
 * the commit to compare this build with (without it, that suite has no rows).
 * A new suite is one function returning rows (see `Suite` in measure.ts), added to SUITES.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { fileURLToPath } from 'node:url';
import { accuracySuite } from './accuracy.js';
import { beforeAfterSuite } from './before-after.js';
import { cliSuite } from './cli.js';
import { cliLargeKSuite } from './cli-large-k.js';
import { flexibleSuite } from './flexible.js';
import { httpSuite } from './http.js';
import { httpKeysSuite } from './http-keys.js';
import { incrementSuite } from './increment.js';
import { limitsSuite } from './limits.js';
import {
  type BenchOptions,
  checksumOfAll,
  formatBytes,
  formatCount,
  nowNs,
  type Row,
  type Suite,
} from './measure.js';
import { memorySuite } from './memory.js';
import { proxySuite } from './proxy.js';
import { quantilesSuite } from './quantiles.js';
import { redisSuite } from './redis.js';
import { runtimesSuite } from './runtimes.js';
import { sharedSuite } from './shared.js';
import { tableSuite } from './table.js';
import { KEY_COUNT, SEED } from './workload.js';

const SUITES: [name: string, suite: Suite][] = [
  ['increment', incrementSuite],
  ['memory', memorySuite],
  ['shared', sharedSuite],
  ['accuracy', accuracySuite],
  ['cli', cliSuite],
  ['cli-large-k', cliLargeKSuite],
  ['table', tableSuite],
  ['limits', limitsSuite],
  ['flexible', flexibleSuite],
  ['http', httpSuite],
  ['http-keys', httpKeysSuite],
  ['proxy', proxySuite],
  ['quantiles', quantilesSuite],
  ['redis', redisSuite],
  ['runtimes', runtimesSuite],
  ['before-after', beforeAfterSuite],
];

const RUNS = 5;
const BEGIN = '<!-- results:begin -->';
const END = '<!-- results:end -->';
const REPORT = fileURLToPath(new URL('../../bench/REPORT.md', import.meta.url));

const INTRO = `# hotcount benchmarks

Measured by \`npm run bench\` (\`npm run bench -- --full\` for 100M events). Everything between the
results markers is generated from the measurements of the last run; notes outside them are kept.
Speed is measured here only, never in the tests.

`;

function parseArgs(argv: string[]): { full: boolean; only?: string; base?: string } {
  let full = false;
  let only: string | undefined;
  let base: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--full') full = true;
    else if (arg === '--only' && SUITES.some(([name]) => name === argv[i + 1])) only = argv[++i];
    else if (arg === '--base' && /^[\w./~^-]+$/.test(argv[i + 1] ?? '')) base = argv[++i];
    else {
      throw new RangeError(
        `unknown argument ${JSON.stringify(arg)}; options: --full, --base REF (a commit, for ` +
          'before-after), --only ' +
          SUITES.map(([name]) => name).join('|'),
      );
    }
  }
  return { full, only, base };
}

function escapeCell(text: string): string {
  return text.replace(/\|/g, '\\|');
}

function table(rows: Row[]): string {
  const lines = ['| Case | Measured | Target | Met |', '| --- | --- | --- | --- |'];
  for (const row of rows) {
    const met = row.met === null ? '-' : row.met ? 'yes' : 'no';
    lines.push(
      `| ${escapeCell(row.case)} | ${escapeCell(row.measured)} | ${escapeCell(row.target)} | ${met} |`,
    );
  }
  return lines.join('\n');
}

function machine(): string {
  const cores = cpus();
  const model = cores.length > 0 ? cores[0].model.trim() : 'unknown CPU';
  return (
    `${model}, ${cores.length} logical CPUs, ${formatBytes(totalmem())} RAM; ` +
    `Node ${process.version} (V8 ${process.versions.v8}), ${process.platform} ${process.arch}`
  );
}

function results(options: BenchOptions, rows: Row[], seconds: number): string {
  const met = rows.filter((r) => r.met === true).length;
  const targets = rows.filter((r) => r.met !== null).length;
  return [
    `Run of ${new Date().toISOString()}${options.full ? ' (--full)' : ''}, ${seconds.toFixed(0)} s.`,
    '',
    `- Machine: ${machine()}.`,
    `- Workload: ${formatCount(KEY_COUNT)} distinct keys, ${formatCount(options.events)} events ` +
      `drawn UNIFORMLY over them (seed 0x${SEED.toString(16)}, xoshiro128**); integer keys are ` +
      'distinct int32 in [0, 2^30), string keys look like `customer-000123/api/v1/orders/0042ab`. ' +
      'Keys and events are generated before timing.',
    `- Method: every figure is the median of ${options.runs} runs; competitors alternate run by ` +
      'run and every ratio is taken within one round; each loop is warmed up first and returns ' +
      'a checksum that is printed; memory is measured in a fresh child process per run.',
    `- Targets met: ${met} of ${targets}.`,
    '',
    table(rows),
    '',
    'Notes:',
    '- "the sketch" runs on the WebAssembly engine (the default); "JS engine" is the same sketch ' +
      'with `engine: "js"`, its reference. Every structure is made and warmed once and kept across ' +
      'rounds (the Maps hold every key before the first round).',
    '- "the floor" is the fastest plain JS for the same update, in bench/increment.ts: one ' +
      "function with the HalfSipHash-1-3 rounds written inline and count-min.ts's index " +
      'arithmetic over a bare Int32Array (no class, no call, no saturation, total or checks); ' +
      '"unkeyed" is that loop with a multiply-xorshift hash instead.',
    '- bloom-filters hashes strings (two XXH64 per update, in emulated 64-bit arithmetic), so it ' +
      'is fed `String(key)` inside its loop; it runs on 1M events only.',
    '- Map<string, number> reuses the hash V8 caches inside each (pregenerated) string; the ' +
      'sketch hashes the characters on every call.',
    '- Memory growth is heapUsed + external growth after a full GC; each loop is warmed up on a ' +
      "throwaway structure first, so compiled code is not counted as the structure's memory. " +
      'maxRSS is the whole child process (compare with the baseline child).',
  ].join('\n');
}

function writeReport(block: string): void {
  const generated = `${BEGIN}\n${block}\n${END}`;
  let text = existsSync(REPORT) ? readFileSync(REPORT, 'utf8') : INTRO;
  const begin = text.indexOf(BEGIN);
  const end = text.indexOf(END);
  if (begin !== -1 && end > begin) {
    text = text.slice(0, begin) + generated + text.slice(end + END.length);
  } else {
    text = `${text.trimEnd()}\n\n${generated}\n`;
  }
  writeFileSync(REPORT, text);
}

async function main(): Promise<void> {
  const { full, only, base } = parseArgs(process.argv.slice(2));
  const options: BenchOptions = {
    full,
    base,
    events: full ? 100_000_000 : 10_000_000,
    runs: RUNS,
    log: (line) => console.log(line),
  };
  console.log(`hotcount bench: ${machine()}`);
  const start = nowNs();
  const rows: Row[] = [];
  for (const [name, suite] of SUITES) {
    if (only !== undefined && name !== only) continue;
    console.log(`suite ${name}`);
    rows.push(...(await suite(options)));
  }
  const seconds = (nowNs() - start) / 1e9;
  const block = results(options, rows, seconds);
  if (only !== undefined) {
    console.log(`\n${table(rows)}\n\n(--only: the report is not written)`);
    return;
  }
  writeReport(block);
  console.log(`\n${block}\n`);
  console.log(`checksum ${checksumOfAll()} (printed so that no timed loop can be optimized away)`);
  console.log(`wrote ${REPORT}`);
}

await main();
