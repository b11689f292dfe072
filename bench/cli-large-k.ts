/**
 * `hotcount top -k 1000000` on the 10M-line log of cli.ts, against
 * `LC_ALL=C sort | uniq -c | sort -rn | head -1000000`: what a large k costs. The log has fewer
 * distinct lines than k, so both print every key; hotcount's counts are checked against the
 * pipeline's exact ones (each must lie within its bounds).
 *
 * Separate processes, in rotation, 3 runs each; wall time and peak RSS as in cli.ts.
 */
import { statSync } from 'node:fs';
import { CLI, generateLog, LOG, measure, type Run } from './cli.js';
import { formatBytes, formatRatio, median, type Suite } from './measure.js';

const K = 1_000_000;
const RUNS = 3;

export const cliLargeKSuite: Suite = async (options) => {
  await generateLog(options.log);
  const bytes = statSync(LOG).size;
  const hotcount = [process.execPath, CLI, 'top', LOG, '-k', String(K), '--json'];
  const sort = ['bash', '-c', `LC_ALL=C sort '${LOG}' | uniq -c | sort -rn | head -${K}`];
  const ours: Run[] = [];
  const theirs: Run[] = [];
  for (let round = 0; round < RUNS; round++) {
    ours.push(measure(hotcount));
    theirs.push(measure(sort));
    options.log(
      `    round ${round + 1}/${RUNS}: hotcount -k ${K} ${ours[round].seconds.toFixed(2)} s ` +
        `${formatBytes(ours[round].maxRssBytes)}, sort pipeline ${theirs[round].seconds.toFixed(2)} s ` +
        `${formatBytes(theirs[round].maxRssBytes)}`,
    );
  }
  const exact = new Map<string, number>();
  for (const line of theirs[0].output.split('\n')) {
    const match = /^\s*(\d+) (.*)$/.exec(line);
    if (match) exact.set(match[2], Number(match[1]));
  }
  const rows = (
    JSON.parse(ours[0].output) as {
      top: { key: string; count: number; lowerBound: number; upperBound: number }[];
    }
  ).top;
  const within = rows.filter((row) => {
    const count = exact.get(row.key);
    return count !== undefined && row.lowerBound <= count && count <= row.upperBound;
  }).length;
  const equal = rows.filter((row) => exact.get(row.key) === row.count).length;
  const time = median(ours.map((run, i) => run.seconds / theirs[i].seconds));
  const rss = median(ours.map((run, i) => run.maxRssBytes / theirs[i].maxRssBytes));
  const workload = `10M lines, ${formatBytes(bytes)}, ${exact.size} distinct`;
  return [
    {
      case: `hotcount top -k ${K} vs the sort pipeline with head -${K} (${workload}): time`,
      measured:
        `${formatRatio(time)} the pipeline's time (median ${median(ours.map((r) => r.seconds)).toFixed(2)} s ` +
        `vs ${median(theirs.map((r) => r.seconds)).toFixed(2)} s)`,
      target: 'no slower',
      met: time <= 1,
    },
    {
      case: `hotcount top -k ${K} vs the sort pipeline: peak RSS (largest process)`,
      measured:
        `${formatRatio(rss)} of it (median ${formatBytes(median(ours.map((r) => r.maxRssBytes)))} ` +
        `vs ${formatBytes(median(theirs.map((r) => r.maxRssBytes)))})`,
      target: 'at most the pipeline',
      met: rss <= 1,
    },
    {
      case: `hotcount top -k ${K}: every key, each exact count within its bounds`,
      measured:
        `${rows.length} keys of ${exact.size}; ${within} within their bounds, ` +
        `${equal} with count equal to the exact count`,
      target: 'every key, every count within bounds',
      met: rows.length === exact.size && within === rows.length,
    },
  ];
};
