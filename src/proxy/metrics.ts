/**
 * /metrics: the Prometheus text exposition format (version 0.0.4), written by hand so that the
 * proxy needs no dependency: per metric a `# HELP` and a `# TYPE` line, then its samples;
 * label values escaped (backslash, double quote, line feed); counters named `_total`.
 */
import { BUCKETS_S, type DurationHistogram } from './histogram.js';
import type { LatencySummary } from './latency.js';
import type { ProxyStatus } from './status.js';
import type { Traffic } from './traffic.js';

/** The Content-Type of `metricsText`'s output: Prometheus' text format, version 0.0.4. */
export const METRICS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

type Sample = [labels: Record<string, string>, value: number];

function escapeLabel(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

function metric(name: string, type: 'counter' | 'gauge', help: string, samples: Sample[]): string {
  let out = `# HELP ${name} ${help}\n# TYPE ${name} ${type}\n`;
  for (const [labels, value] of samples) {
    const pairs = Object.entries(labels).map(([k, v]) => `${k}="${escapeLabel(v)}"`);
    const text = Number.isFinite(value)
      ? String(value)
      : value > 0
        ? '+Inf'
        : value < 0
          ? '-Inf'
          : 'NaN';
    out += `${name}${pairs.length === 0 ? '' : `{${pairs.join(',')}}`} ${text}\n`;
  }
  return out;
}

/** A histogram's lines: cumulative `_bucket{le}`, `_sum` (seconds) and `_count`. */
function histogram(name: string, help: string, latency: DurationHistogram): string {
  let out = `# HELP ${name} ${help}\n# TYPE ${name} histogram\n`;
  let below = 0;
  for (let b = 0; b <= BUCKETS_S.length; b++) {
    below += latency.counts[b];
    const le = b === BUCKETS_S.length ? '+Inf' : String(BUCKETS_S[b]);
    out += `${name}_bucket{le="${le}"} ${below}\n`;
  }
  return `${out}${name}_sum ${latency.sum}\n${name}_count ${latency.count}\n`;
}

/**
 * The last minute's quantiles (`quantile` 0.5, 0.9, 0.99, and 1 for the max) as gauges, seconds:
 * each within 1% of the true one, where a histogram's buckets give only their edges. No sample
 * when no request ended in the minute.
 */
function lastMinute(name: string, help: string, latency: LatencySummary): string {
  const samples: Sample[] = [];
  const { p50, p90, p99, max } = latency;
  for (const [quantile, ms] of [
    ['0.5', p50],
    ['0.9', p90],
    ['0.99', p99],
    ['1', max],
  ] as const) {
    if (ms !== null) samples.push([{ quantile }, ms / 1000]);
  }
  return metric(name, 'gauge', `${help}: quantiles within 1%, seconds.`, samples);
}

/**
 * The proxy's metrics in Prometheus' text format: counters and gauges from `status` (what
 * `statusOf` returns), the latency histograms (seconds) from `traffic` (the proxy's `traffic`).
 */
export function metricsText(status: ProxyStatus, traffic: Traffic): string {
  const limits = status.limits;
  return [
    metric(
      'hotcount_requests_total',
      'counter',
      'Requests that reached the proxy, by what it decided.',
      Object.entries(status.requests).map(([outcome, count]) => [{ outcome }, count]),
    ),
    metric(
      'hotcount_upstream_errors_total',
      'counter',
      'Requests the upstream failed: refused or reset (502), or silent past the timeout (504).',
      Object.entries(status.upstreamErrors).map(([kind, count]) => [{ kind }, count]),
    ),
    metric(
      'hotcount_rejected_total',
      'counter',
      'Requests refused before any limit: a target over maxUrlLength (414), ambiguous framing (400).',
      Object.entries(status.rejected).map(([reason, count]) => [{ reason }, count]),
    ),
    metric(
      'hotcount_connections_refused_total',
      'counter',
      'Client connections past maxConnections: answered 503, or past twice it closed.',
      [[{}, status.connectionsRefused]],
    ),
    histogram(
      'hotcount_request_duration_seconds',
      "Requests let through, from the head read to the response's end.",
      traffic.total.histogram,
    ),
    histogram(
      'hotcount_upstream_duration_seconds',
      "Requests let through, from sent upstream to the upstream's response in full.",
      traffic.upstream.histogram,
    ),
    lastMinute(
      'hotcount_request_duration_last_minute_seconds',
      "Requests let through in the last minute, from the head read to the response's end",
      status.latencyMs.total,
    ),
    lastMinute(
      'hotcount_upstream_duration_last_minute_seconds',
      "Requests let through in the last minute, from sent upstream to the upstream's response in full",
      status.latencyMs.upstream,
    ),
    metric('hotcount_inflight', 'gauge', 'Requests in progress through the proxy.', [
      [{}, status.inflight],
    ]),
    metric(
      'hotcount_limit_inflight',
      'gauge',
      "Requests in progress counted by a limit's inflight sketch.",
      limits
        .filter((l) => l.inflight !== null)
        .map((l) => [{ limit: l.name }, l.inflight?.inProgress ?? 0]),
    ),
    metric(
      'hotcount_sketch_memory_bytes',
      'gauge',
      "Bytes of a limit's sketches (fixed, whatever the number of clients).",
      limits.map((l) => [{ limit: l.name }, l.memoryBytes]),
    ),
    metric(
      'hotcount_sketch_epsilon',
      'gauge',
      "Relative error of a limit's sketches: e / width.",
      limits.map((l) => [{ limit: l.name }, l.sketch.epsilon]),
    ),
    metric(
      'hotcount_sketch_error_bound',
      'gauge',
      'How far above the truth a count may be, with probability 1 - delta.',
      limits.flatMap((l) => {
        const samples: Sample[] = [];
        if (l.errorBound.rate !== null)
          samples.push([{ limit: l.name, kind: 'rate' }, l.errorBound.rate]);
        if (l.errorBound.inflight !== null)
          samples.push([{ limit: l.name, kind: 'inflight' }, l.errorBound.inflight]);
        return samples;
      }),
    ),
    metric('hotcount_uptime_seconds', 'gauge', 'Seconds since the proxy started.', [
      [{}, status.uptimeS],
    ]),
  ].join('');
}
