/**
 * The proxy's state as data: what /status serves as JSON, the status page draws, and /metrics
 * writes in Prometheus' text format.
 */
import type { LimitingProxy } from './proxy.js';
import type { Outcome, SecondCounts } from './traffic.js';

export interface LimitStatus {
  name: string;
  prefix: string;
  key: string;
  rate: { limit: number; windowMs: number; algorithm: string; burst: number } | null;
  inflight: { limit: number; inProgress: number } | null;
  /** One sketch's shape: width x depth, epsilon = e / width, delta = e^-depth. */
  sketch: { width: number; depth: number; epsilon: number; delta: number };
  memoryBytes: number;
  /**
   * How far above the truth a count may be, w.p. 1 - delta: for the rate, a key's count in the
   * current window (null for gcra); for inflight, a key's requests in progress.
   */
  errorBound: { rate: number | null; inflight: number | null };
  topByRate: { key: string; perSecond: number }[];
  topByInflight: { key: string; inflight: number }[];
}

export interface ProxyStatus {
  upstream: string;
  uptimeS: number;
  requests: Record<Outcome, number>;
  upstreamErrors: { refused: number; timeout: number };
  /** Requests refused before any limit: target too long (414), ambiguous framing (400). */
  rejected: { url: number; framing: number };
  /** Client connections past the cap (answered 503 or closed). */
  connectionsRefused: number;
  inflight: number;
  /** Durations over the last minute, milliseconds (null before any request). */
  latencyMs: {
    total: { p50: number | null; p99: number | null };
    upstream: { p50: number | null; p99: number | null };
  };
  /** The last minute, second by second, oldest first. */
  perSecond: SecondCounts[];
  memoryBytes: { limits: number; status: number };
  limits: LimitStatus[];
}

const NO_SKETCH = { width: 0, depth: 0, epsilon: 0, delta: 0 };

export function statusOf(proxy: LimitingProxy): ProxyStatus {
  const { traffic } = proxy;
  return {
    upstream: proxy.upstreamUrl,
    uptimeS: Math.round((Date.now() - proxy.startedAt) / 1000),
    requests: { ...traffic.totals },
    upstreamErrors: { ...traffic.upstreamErrors },
    rejected: { ...traffic.rejected },
    connectionsRefused: traffic.connectionsRefused,
    inflight: traffic.inflight,
    latencyMs: {
      total: { p50: traffic.total.quantileMs(0.5), p99: traffic.total.quantileMs(0.99) },
      upstream: { p50: traffic.upstream.quantileMs(0.5), p99: traffic.upstream.quantileMs(0.99) },
    },
    perSecond: traffic.history(),
    memoryBytes: proxy.memoryBytes,
    limits: proxy.limits.map((limit) => {
      const limiter = limit.rate?.limiter ?? null;
      const inflight = limit.inflight;
      const sketch = (limiter ?? inflight?.inflight)?.dimensions ?? NO_SKETCH;
      return {
        name: limit.name,
        prefix: limit.prefix,
        key: limit.keyKind,
        rate:
          limiter === null
            ? null
            : {
                limit: limiter.limit,
                windowMs: limiter.windowMs,
                algorithm: limiter.algorithm,
                burst: limiter.burst,
              },
        inflight:
          inflight === null ? null : { limit: inflight.limit, inProgress: inflight.inflight.total },
        sketch,
        memoryBytes: limit.memoryBytes,
        errorBound: {
          rate: limiter?.errorBound ?? null,
          inflight: inflight?.inflight.errorBound ?? null,
        },
        topByRate: limit.hot.byRate(),
        topByInflight: limit.hot.byInflight(),
      };
    }),
  };
}
