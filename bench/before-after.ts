/**
 * `npm run bench -- --only before-after --base REF`: what a change of the hot paths costs. The
 * cases a refactor must not slow down (RateLimiter.check, sliding window and GCRA, on 1M client
 * addresses; CountMinSketch.increment on integer and 36-character keys) on this build and on
 * REF's (a commit, built once into .bench-build/), in one run: a child process per side and
 * round (before-after-child.ts), the sides alternating, each ratio taken within a round. A row
 * is met when this build's median is within the rounds' spread of REF's: no slower than REF's
 * slowest round. Not part of a full run, which has no REF.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, symlinkSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { SideSample } from './before-after-child.js';
import {
  type BenchOptions,
  formatNs,
  formatRange,
  formatRatio,
  median,
  type Row,
} from './measure.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CHILD = fileURLToPath(new URL('./before-after-child.js', import.meta.url));

/** REF's build, made once per commit: its sources from git, this checkout's node_modules. */
function buildOf(ref: string, log: (line: string) => void): { root: string; commit: string } {
  const commit = execFileSync('git', ['rev-parse', '--verify', `${ref}^{commit}`], {
    cwd: ROOT,
    encoding: 'utf8',
  }).trim();
  const root = `${ROOT}.bench-build/${commit}`;
  if (!existsSync(`${root}/build/src/index.js`)) {
    log(`  building ${ref} (${commit.slice(0, 12)}) in ${root}`);
    rmSync(root, { recursive: true, force: true });
    mkdirSync(root, { recursive: true });
    execFileSync('sh', ['-c', `git archive ${commit} | tar -x -C '${root}'`], { cwd: ROOT });
    symlinkSync(`${ROOT}node_modules`, `${root}/node_modules`);
    execFileSync('npm', ['run', 'build', '--silent'], { cwd: root, stdio: 'inherit' });
  }
  return { root, commit };
}

function side(root: string): SideSample {
  const child = spawnSync(process.execPath, [CHILD, root], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  if (child.status !== 0) throw new Error(`before-after-child exited with ${child.status}`);
  return JSON.parse(child.stdout) as SideSample;
}

export async function beforeAfterSuite(options: BenchOptions): Promise<Row[]> {
  const { base, runs, log } = options;
  if (base === undefined) return [];
  const before = buildOf(base, log);
  const short = before.commit.slice(0, 12);
  const rounds = { before: [] as SideSample[], after: [] as SideSample[] };
  for (let round = 0; round < runs; round++) {
    // Which side goes first alternates, so that neither always runs on a warmer machine.
    const order = round % 2 === 0 ? (['before', 'after'] as const) : (['after', 'before'] as const);
    for (const which of order) rounds[which].push(side(which === 'before' ? before.root : ROOT));
    const line = Object.keys(rounds.after[round])
      .map(
        (name) =>
          `${name} ${formatNs(rounds.after[round][name])} vs ${formatNs(rounds.before[round][name])}`,
      )
      .join(', ');
    log(`    round ${round + 1}/${runs}: ${line}`);
  }
  return Object.keys(rounds.after[0]).map((name) => {
    const after = rounds.after.map((sample) => sample[name]);
    const was = rounds.before.map((sample) => sample[name]);
    const ratios = after.map((ns, i) => ns / was[i]);
    const ratio = median(ratios);
    return {
      case: `${name}: this build vs ${short} (before)`,
      measured:
        `${formatRatio(ratio)} its time (runs ${formatRange(ratios, formatRatio)}; ` +
        `${formatNs(median(after))}/call vs ${formatNs(median(was))}, before's rounds ` +
        `${formatRange(was, formatNs)})`,
      target: "no slower than before's slowest round",
      met: median(after) <= Math.max(...was),
    };
  });
}
