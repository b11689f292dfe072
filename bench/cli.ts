/**
 * `hotcount top` against `LC_ALL=C sort | uniq -c | sort -rn | head -20` on a generated
 * 10M-line access log (Zipf(1.0) over 1M client/path keys, ~330 MB; cached in bench/.data).
 *
 * Both run as separate processes, in rotation, 5 runs each, and so does `hotcount top
 * --threads 2`. Wall time is measured around the whole command; peak RSS is
 * getrusage(RUSAGE_CHILDREN).ru_maxrss from a python3 wrapper, that is the largest single
 * process of the command (for the pipeline, `sort`). The top 20 are compared key by key, with
 * counts: hotcount against the pipeline, and --threads 2 against one thread.
 */
import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import {
  createWriteStream,
  existsSync,
  mkdirSync,
  readFileSync,
  renameSync,
  statSync,
} from 'node:fs';
import { fileURLToPath } from 'node:url';
import { xorshift32, ZipfSampler } from '../src/cli/zipf.js';
import { formatBytes, formatRange, formatRatio, median, type Suite } from './measure.js';

const LINES = 10_000_000;
const KEYS = 1_000_000;
const DATA = fileURLToPath(new URL('../../bench/.data/', import.meta.url));
export const LOG = `${DATA}access-10m.log`;
export const CLI = fileURLToPath(new URL('../src/cli/main.js', import.meta.url));

/** Writes the log once: lines like "10.12.3.0 GET /api/v1/items/48173", Zipf(1.0) by key. */
export async function generateLog(log: (line: string) => void): Promise<void> {
  if (existsSync(LOG)) return;
  log(`  generating ${LOG} (${LINES / 1e6}M lines)...`);
  mkdirSync(DATA, { recursive: true });
  const zipf = new ZipfSampler(KEYS, 1.0);
  const random = xorshift32(12345);
  const out = createWriteStream(`${LOG}.tmp`);
  let lines: string[] = [];
  for (let i = 0; i < LINES; i++) {
    const lo = zipf.sample(random());
    lines.push(`10.${lo % 256}.${(lo >> 8) % 256}.${lo >> 16} GET /api/v1/items/${lo}`);
    if (lines.length === 100_000) {
      if (!out.write(`${lines.join('\n')}\n`)) await once(out, 'drain');
      lines = [];
    }
  }
  out.end(lines.length > 0 ? `${lines.join('\n')}\n` : '');
  await once(out, 'finish');
  renameSync(`${LOG}.tmp`, LOG);
}

const WRAPPER = `
import json, resource, subprocess, sys, time
started = time.monotonic()
with open(sys.argv[1], 'wb') as out:
    status = subprocess.run(sys.argv[2:], stdout=out).returncode
print(json.dumps({"seconds": time.monotonic() - started,
                  "maxRssBytes": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024,
                  "status": status}))
`;

export interface Run {
  seconds: number;
  maxRssBytes: number;
  output: string;
}

export function measure(command: string[]): Run {
  const outputFile = `${DATA}output.txt`;
  const result = JSON.parse(
    execFileSync('python3', ['-c', WRAPPER, outputFile, ...command], { encoding: 'utf8' }),
  ) as { seconds: number; maxRssBytes: number; status: number };
  if (result.status !== 0) throw new Error(`${command.join(' ')} exited with ${result.status}`);
  return { ...result, output: readFileSync(outputFile, 'utf8') };
}

interface TopRow {
  key: string;
  count: number;
  lowerBound: number;
}

/** key -> count of the top 20 of each tool. */
function topOfHotcount(output: string): Map<string, number> {
  const parsed = JSON.parse(output) as { top: TopRow[] };
  return new Map(parsed.top.map((row) => [row.key, row.count]));
}

/** The output but its time, which is the one field meant to differ from run to run. */
function withoutTime(output: string): string {
  return JSON.stringify({ ...JSON.parse(output), seconds: undefined });
}

/**
 * Of the top rows of `one`, those whose lower bound `other` gives too (and of those, the ones
 * exact in both); of the others, the largest gap between the two lower bounds, in lines and as
 * a share of the count.
 */
function sameBounds(
  one: string,
  other: string,
): { same: number; exact: number; rows: number; gap: number; share: number } {
  const rows = (JSON.parse(one) as { top: TopRow[] }).top;
  const theirs = new Map((JSON.parse(other) as { top: TopRow[] }).top.map((row) => [row.key, row]));
  let same = 0;
  let exact = 0;
  let gap = 0;
  let share = 0;
  for (const row of rows) {
    const found = theirs.get(row.key);
    if (found === undefined) continue;
    if (found.lowerBound === row.lowerBound) {
      same++;
      if (row.lowerBound === row.count && found.lowerBound === found.count) exact++;
    } else {
      gap = Math.max(gap, Math.abs(row.lowerBound - found.lowerBound));
      share = Math.max(share, Math.abs(row.lowerBound - found.lowerBound) / row.count);
    }
  }
  return { same, exact, rows: rows.length, gap, share };
}

function topOfSort(output: string): Map<string, number> {
  const top = new Map<string, number>();
  for (const line of output.split('\n')) {
    const match = /^\s*(\d+) (.*)$/.exec(line);
    if (match) top.set(match[2], Number(match[1]));
  }
  return top;
}

export const cliSuite: Suite = async (options) => {
  await generateLog(options.log);
  const bytes = statSync(LOG).size;
  const hotcount = [process.execPath, CLI, 'top', LOG, '-k', '20', '--json'];
  const threaded = [...hotcount, '--threads', '2'];
  const sort = ['bash', '-c', `LC_ALL=C sort '${LOG}' | uniq -c | sort -rn | head -20`];
  const ours: Run[] = [];
  const twos: Run[] = [];
  const theirs: Run[] = [];
  for (let round = 0; round < options.runs; round++) {
    ours.push(measure(hotcount));
    twos.push(measure(threaded));
    theirs.push(measure(sort));
    options.log(
      `    round ${round + 1}/${options.runs}: hotcount ${ours[round].seconds.toFixed(2)} s ` +
        `${formatBytes(ours[round].maxRssBytes)}, --threads 2 ${twos[round].seconds.toFixed(2)} s ` +
        `${formatBytes(twos[round].maxRssBytes)}, sort pipeline ${theirs[round].seconds.toFixed(2)} s ` +
        `${formatBytes(theirs[round].maxRssBytes)}`,
    );
  }
  const speedup = median(ours.map((run, i) => theirs[i].seconds / run.seconds));
  const rssShare = median(ours.map((run, i) => run.maxRssBytes / theirs[i].maxRssBytes));
  const a = topOfHotcount(ours[0].output);
  const b = topOfSort(theirs[0].output);
  const sameKeys = a.size === 20 && b.size === 20 && [...a.keys()].every((key) => b.has(key));
  const sameCounts = sameKeys && [...a].every(([key, count]) => b.get(key) === count);
  const workload = `${LINES / 1e6}M lines, ${formatBytes(bytes)}`;
  const threadRatios = ours.map((run, i) => run.seconds / twos[i].seconds);
  const threadSpeedup = median(threadRatios);
  // Every run of each, not only the first: the threads' interleaving differs run by run.
  const oneTop = topOfHotcount(ours[0].output);
  const twoTops = twos.map((run) => topOfHotcount(run.output));
  const sameTopKeys = twoTops.every(
    (top) => top.size === 20 && [...top.keys()].every((key, i) => [...oneTop.keys()][i] === key),
  );
  const sameTopCounts =
    sameTopKeys && twoTops.every((top) => [...top].every(([key, n]) => oneTop.get(key) === n));
  // Issue 34: the same input and options, the same output, whatever the scheduling.
  const sameRuns = (runs: Run[]) =>
    runs.filter((run) => withoutTime(run.output) === withoutTime(runs[0].output)).length;
  const bounds = sameBounds(ours[0].output, twos[0].output);
  return [
    {
      case: `hotcount top --threads 2 vs --threads 1 (${workload}): time`,
      measured:
        `${formatRatio(threadSpeedup)} faster (runs ${formatRange(threadRatios, formatRatio)}; median ${median(twos.map((r) => r.seconds)).toFixed(2)} s vs ` +
        `${median(ours.map((r) => r.seconds)).toFixed(2)} s; peak RSS ` +
        `${formatBytes(median(twos.map((r) => r.maxRssBytes)))} vs ` +
        `${formatBytes(median(ours.map((r) => r.maxRssBytes)))})`,
      target: 'at least 1.4x faster',
      met: threadSpeedup >= 1.4,
    },
    {
      case: 'hotcount top --threads 2 vs --threads 1: top 20, in every run',
      measured: sameTopCounts
        ? 'same 20 keys in the same order, same counts'
        : sameTopKeys
          ? 'same 20 keys in the same order, counts differ'
          : 'different keys or order',
      target: 'same top 20',
      met: sameTopKeys,
    },
    {
      case: 'hotcount top, --threads 1 and --threads 2: the same output (JSON, its seconds aside) run after run',
      measured:
        `--threads 2: ${sameRuns(twos)} of ${twos.length} runs as the first; ` +
        `--threads 1: ${sameRuns(ours)} of ${ours.length}`,
      target: 'every run the same',
      met: sameRuns(twos) === twos.length && sameRuns(ours) === ours.length,
    },
    {
      case: 'hotcount top --threads 2 vs --threads 1: lower bounds of the top 20',
      measured:
        `${bounds.same} of ${bounds.rows} keys with the same lower bound ` +
        `(${bounds.exact} exact in both); the others at most ${bounds.gap} lines apart ` +
        `(${(bounds.share * 100).toPrecision(2)}% of the count)`,
      target: 'report only',
      met: null,
    },
    {
      case: `hotcount top vs LC_ALL=C sort | uniq -c | sort -rn | head (${workload}): time`,
      measured:
        `${formatRatio(speedup)} faster (median ${median(ours.map((r) => r.seconds)).toFixed(2)} s ` +
        `vs ${median(theirs.map((r) => r.seconds)).toFixed(2)} s)`,
      target: 'at least 6x faster',
      met: speedup >= 6,
    },
    {
      case: 'hotcount top vs the sort pipeline: peak RSS (largest process)',
      measured:
        `${(rssShare * 100).toFixed(1)}% of it (median ${formatBytes(median(ours.map((r) => r.maxRssBytes)))} ` +
        `vs ${formatBytes(median(theirs.map((r) => r.maxRssBytes)))})`,
      target: 'at most 1/5',
      met: rssShare <= 0.2,
    },
    {
      case: 'hotcount top vs the sort pipeline: top 20',
      measured: sameCounts
        ? 'same 20 keys, same counts'
        : sameKeys
          ? 'same 20 keys, counts differ'
          : 'different keys',
      target: 'same top 20',
      met: sameKeys,
    },
  ];
};
