/**
 * What every suite shares: the row it reports, the options it runs under, and the rules of
 * measurement.
 *
 * Rules. Every reported figure is the median of `options.runs` (at least 5) runs. Competitors
 * run in rotation (A, B, C, A, B, C, ...), so a slow patch of the machine hits all of them, and
 * a ratio is taken between the runs of one round, then the median of those ratios is reported.
 * Each timed loop returns a checksum of what it computed; checksums go to `consume`, and their
 * sum is printed at the end, so no loop can be optimized away.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** One line of the report's table. */
export interface Row {
  /** What was measured, e.g. "1. increment, integer keys: sketch 2048x4 vs Map". */
  case: string;
  /** The figure, with its unit and the raw numbers it came from. */
  measured: string;
  /** The target from the issue, or "report only". */
  target: string;
  /** Whether the target is met; null when there is no target. */
  met: boolean | null;
}

export interface BenchOptions {
  /** `--full`: the 100M-event workload. */
  full: boolean;
  /** Events of the seed workload (10M, or 100M with --full). */
  events: number;
  /** Runs per figure (at least 5). */
  runs: number;
  /** `--base REF`: the commit the suite before-after compares this build with. */
  base?: string;
  /** Progress output. */
  log: (line: string) => void;
}

/** A suite: measures, then returns its rows. run.ts runs them in order. */
export type Suite = (options: BenchOptions) => Promise<Row[]>;

let checksum = 0;

/** Keeps a loop's result observable, so the loop cannot be eliminated. */
export function consume(value: number): void {
  checksum = (checksum + value) | 0;
}

/** The sum of every consumed result; printed by run.ts. */
export function checksumOfAll(): number {
  return checksum;
}

/** Monotonic nanoseconds. */
export function nowNs(): number {
  return Number(process.hrtime.bigint());
}

export function median(values: readonly number[]): number {
  if (values.length === 0) throw new RangeError('median of no values');
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** A competitor in a rotation: one call runs it once, on fresh state, over `count` operations. */
export interface Competitor {
  readonly name: string;
  /** Runs `count` operations (events, hashes) and returns the nanoseconds they took. */
  run(count: number): number;
}

// A full collection between runs, so that one competitor's garbage (a Map's old tables) is not
// collected on another competitor's clock. run.js is started without --expose-gc (the npm script
// stays plain), so the flag is set at startup and the function fetched from a fresh context.
// Under Bun (bench/runtimes.ts runs the core cases there too), which has no V8 flags: Bun.gc.
const bun = (globalThis as { Bun?: { gc(force: boolean): void } }).Bun;
if (bun === undefined) setFlagsFromString('--expose-gc');
const gc: () => void =
  bun === undefined ? (runInNewContext('gc') as () => void) : () => bun.gc(true);

/** A full, synchronous garbage collection. */
export function collectGarbage(): void {
  gc();
}

export interface RotationOptions {
  /** Operations per timed run. */
  operations: number;
  /** Operations per warm-up run; each competitor is warmed up 3 times before the rounds. */
  warmupOperations: number;
  /** Rounds (runs per competitor). */
  runs: number;
  log: (line: string) => void;
}

/**
 * Warms every competitor up (so that each loop is optimized before it is timed), then runs them
 * in rotation, `runs` rounds, and returns ns per operation: result.get(name)[round].
 */
export function rotate(
  competitors: readonly Competitor[],
  options: RotationOptions,
): Map<string, number[]> {
  const { operations, warmupOperations, runs } = options;
  for (let i = 0; i < 3; i++) {
    for (const competitor of competitors) competitor.run(warmupOperations);
  }
  const rounds = new Rounds(competitors, options);
  for (let round = 0; round < runs; round++) {
    for (const competitor of competitors) {
      collectGarbage();
      rounds.record(competitor, competitor.run(operations));
    }
    rounds.end(round);
  }
  return rounds.results;
}

/** A competitor whose operations are asynchronous (a peer's API that returns promises). */
export interface AsyncCompetitor {
  readonly name: string;
  /** Runs `count` operations and resolves to the nanoseconds they took. */
  run(count: number): number | Promise<number>;
}

/** `rotate`, for competitors some of which are asynchronous. */
export async function rotateAsync(
  competitors: readonly AsyncCompetitor[],
  options: RotationOptions,
): Promise<Map<string, number[]>> {
  const { operations, warmupOperations, runs } = options;
  for (let i = 0; i < 3; i++) {
    for (const competitor of competitors) await competitor.run(warmupOperations);
  }
  const rounds = new Rounds(competitors, options);
  for (let round = 0; round < runs; round++) {
    for (const competitor of competitors) {
      collectGarbage();
      rounds.record(competitor, await competitor.run(operations));
    }
    rounds.end(round);
  }
  return rounds.results;
}

/** The figures of a rotation, round by round, and its log lines. */
class Rounds {
  readonly results = new Map<string, number[]>();
  private parts: string[] = [];

  constructor(
    competitors: readonly { name: string }[],
    private readonly options: RotationOptions,
  ) {
    for (const competitor of competitors) this.results.set(competitor.name, []);
  }

  record(competitor: { name: string }, ns: number): void {
    const perOperation = ns / this.options.operations;
    this.results.get(competitor.name)?.push(perOperation);
    this.parts.push(`${competitor.name} ${formatNs(perOperation)}`);
  }

  end(round: number): void {
    this.options.log(`    round ${round + 1}/${this.options.runs}: ${this.parts.join(', ')}`);
    this.parts = [];
  }
}

/** The rounds of one competitor (its name must be in the rotation). */
export function roundsOf(results: Map<string, number[]>, name: string): number[] {
  const rounds = results.get(name);
  if (rounds === undefined) throw new RangeError(`no competitor named ${name}`);
  return rounds;
}

/** a / b round by round: each ratio within one round. */
export function ratiosOf(a: readonly number[], b: readonly number[]): number[] {
  return a.map((value, round) => value / b[round]);
}

/** Median over rounds of a / b, each ratio within one round. */
export function medianRatio(a: readonly number[], b: readonly number[]): number {
  return median(ratiosOf(a, b));
}

/** "lowest-highest" of a figure's runs, to show how much the runs spread around the median. */
export function formatRange(values: readonly number[], format: (value: number) => string): string {
  return `${format(Math.min(...values))}-${format(Math.max(...values))}`;
}

export function formatNs(ns: number): string {
  return `${ns < 10 ? ns.toFixed(2) : ns < 100 ? ns.toFixed(1) : ns.toFixed(0)} ns`;
}

export function formatRatio(ratio: number): string {
  return `${ratio < 10 ? ratio.toFixed(2) : ratio.toFixed(1)}x`;
}

export function formatBytes(bytes: number): string {
  const abs = Math.abs(bytes);
  if (abs < 1024) return `${bytes.toFixed(0)} B`;
  if (abs < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
}

export function formatCount(n: number): string {
  if (n >= 1e6 && n % 1e6 === 0) return `${n / 1e6}M`;
  if (n >= 1e3 && n % 1e3 === 0) return `${n / 1e3}k`;
  return String(n);
}

/** A timed loop over the events: `call` on each event's key, summing what it returns. */
export function timedCalls(
  keys: readonly string[],
  events: Int32Array,
  call: (key: string) => number,
) {
  return (count: number): number => {
    const t = nowNs();
    let sum = 0;
    for (let i = 0; i < count; i++) sum = (sum + call(keys[events[i]])) | 0;
    const ns = nowNs() - t;
    consume(sum);
    return ns;
  };
}

/** The same, awaiting each call. */
export function timedAwaited(
  keys: readonly string[],
  events: Int32Array,
  call: (key: string) => Promise<number>,
) {
  return async (count: number): Promise<number> => {
    const t = nowNs();
    let sum = 0;
    for (let i = 0; i < count; i++) sum = (sum + (await call(keys[events[i]]))) | 0;
    const ns = nowNs() - t;
    consume(sum);
    return ns;
  };
}
