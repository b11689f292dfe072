/**
 * The exact table of heavy hitters: bytes per entry and counting time, each run in a child
 * process of its own (table-memory.ts), 3 runs, medians. Every line of the 10M-line log of
 * cli.ts is counted with `addBytes`, as `hotcount top` counts it, at k = 1M (the table then
 * holds every distinct line) and at k = 20 (the common case).
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { generateLog, LOG } from './cli.js';
import { formatBytes, median, type Row, type Suite } from './measure.js';

const CHILD = fileURLToPath(new URL('./table-memory.js', import.meta.url));
const RUNS = 3;

interface ChildResult {
  entries: number;
  tableBytes: number;
  countSeconds: number;
  topSeconds: number;
  rowsBytes: number;
}

export const tableSuite: Suite = async (options) => {
  await generateLog(options.log);
  const rows: Row[] = [];
  for (const k of [1_000_000, 20]) {
    const runs: ChildResult[] = [];
    for (let run = 0; run < RUNS; run++) {
      const output = execFileSync(process.execPath, ['--expose-gc', CHILD, LOG, String(k)], {
        encoding: 'utf8',
      });
      runs.push(JSON.parse(output));
      options.log(`    k ${k}, run ${run + 1}/${RUNS}: ${output.trim()}`);
    }
    const entries = runs[0].entries;
    const perEntry = median(runs.map((r) => r.tableBytes / r.entries));
    rows.push({
      case: `heavy hitters table, k = ${k} (capacity ${4 * k}), every line of the 10M-line log: memory`,
      measured:
        `${perEntry.toFixed(0)} B per entry (${entries} entries, ${formatBytes(median(runs.map((r) => r.tableBytes)))}); ` +
        `rows of top(): ${formatBytes(median(runs.map((r) => r.rowsBytes)))} more`,
      target: 'report only',
      met: null,
    });
    rows.push({
      case: `heavy hitters table, k = ${k}: time to count the 10M lines, and top()`,
      measured:
        `${median(runs.map((r) => r.countSeconds)).toFixed(2)} s to count, ` +
        `${median(runs.map((r) => r.topSeconds)).toFixed(2)} s for top(capacity)`,
      target: 'report only',
      met: null,
    });
  }
  return rows;
};
