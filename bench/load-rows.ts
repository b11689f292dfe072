/**
 * Rows of the suites that put a server under autocannon (http.ts, proxy.ts): one load is a
 * run's requests/s and latency; a row compares two servers' loads, round by round.
 */
import { formatRange, formatRatio, median, type Row, ratiosOf } from './measure.js';

/** What one autocannon run against a server measured. */
export interface Load {
  rps: number;
  /** Latency quantiles, in milliseconds. */
  p50: number;
  p99: number;
}

/** `name` and the medians of its loads: requests/s, p50 and p99. */
export function describeLoads(name: string, loads: readonly Load[]): string {
  const of = (pick: (load: Load) => number) => median(loads.map(pick));
  return `${name} ${of((l) => l.rps).toFixed(0)} req/s, p50 ${of((l) => l.p50)} ms, p99 ${of((l) => l.p99)} ms`;
}

/**
 * `a`'s requests/s against `b`'s: the median of the ratios taken within each round (`rounds`
 * names them in the row: "runs", "rounds"), against `target` (null: report only).
 */
export function loadRatioRow(
  caseName: string,
  a: readonly [name: string, loads: readonly Load[]],
  b: readonly [name: string, loads: readonly Load[]],
  target: number | null,
  rounds: string,
): Row {
  const ratios = ratiosOf(
    a[1].map((l) => l.rps),
    b[1].map((l) => l.rps),
  );
  const ratio = median(ratios);
  return {
    case: caseName,
    measured: `${formatRatio(ratio)} the requests/s (${rounds} ${formatRange(ratios, formatRatio)}; ${describeLoads(...a)}; ${describeLoads(...b)})`,
    target: target === null ? 'report only' : `>= ${target}x`,
    met: target === null ? null : ratio >= target,
  };
}
