/**
 * The proxy's state as data: what /status serves as JSON, the status page draws, and /metrics
 * writes in Prometheus' text format.
 */
import type { LatencySummary } from './latency.js';
import type { LimitingProxy } from './limiting-proxy.js';
import type { Outcome, SecondCounts } from './traffic.js';

/** One limit's part of the status: its options, its sketches and its hot keys. */
export interface LimitStatus {
  /** The limit's name. */
  name: string;
  /** The paths it applies to (on a segment boundary). */
  prefix: string;
  /** What it counts under: 'ip', 'header:NAME', or 'function' for a key function. */
  key: string;
  /** Its rate, or null for a limit without one. */
  rate: {
    /** Requests a key may make per window. */
    limit: number;
    /** The window, in milliseconds. */
    windowMs: number;
    /** How the limiter decides: 'sliding-window' or 'gcra'. */
    algorithm: string;
    /** GCRA: requests a key may make at once after a quiet spell; the sliding window: the limit. */
    burst: number;
  } | null;
  /** Its inflight limit, or null for a limit without one. */
  inflight: {
    /** Requests in progress a key may have at once. */
    limit: number;
    /** Requests in progress now under this limit, over every key. */
    inProgress: number;
  } | null;
  /** One sketch's shape: width x depth, epsilon = e / width, delta = e^-depth. */
  sketch: {
    /** Counters per row. */
    width: number;
    /** Rows. */
    depth: number;
    /** Relative error: e / width. */
    epsilon: number;
    /** Probability that a count is off by more than the error bound: e^-depth. */
    delta: number;
  };
  /** Bytes of the limit's sketches (fixed, whatever the number of clients). */
  memoryBytes: number;
  /**
   * How far above the truth a count may be, w.p. 1 - delta: for the rate, a key's count in the
   * current window (null for gcra); for inflight, a key's requests in progress.
   */
  errorBound: {
    /** Requests, for the rate; null without a rate, or for gcra. */
    rate: number | null;
    /** Requests in progress; null without an inflight limit. */
    inflight: number | null;
  };
  /** Up to 10 keys by requests per second (sliding over 10 s windows), highest first. */
  topByRate: {
    /** The key, as text. */
    key: string;
    /** Its requests per second. */
    perSecond: number;
  }[];
  /** Up to 10 keys by requests in progress (counted exactly), highest first. */
  topByInflight: {
    /** The key, as text. */
    key: string;
    /** Its requests in progress. */
    inflight: number;
  }[];
}

/** The proxy's state: what /status serves as JSON and /metrics writes. Counts are since start. */
export interface ProxyStatus {
  /** The upstream's URL: http://HOST[:PORT]. */
  upstream: string;
  /** Seconds since the proxy was made, rounded. */
  uptimeS: number;
  /** Requests decided, by outcome. */
  requests: Record<Outcome, number>;
  /** Requests the upstream failed. */
  upstreamErrors: {
    /** Refused or reset the connection, or no HTTP answer: answered 502. */
    refused: number;
    /** Silent past `timeoutMs`: answered 504. */
    timeout: number;
  };
  /** Requests refused before any limit: target too long (414), ambiguous framing (400). */
  rejected: {
    /** Request targets over `maxUrlLength`: answered 414. */
    url: number;
    /** Requests whose framing two parsers could read differently: answered 400. */
    framing: number;
  };
  /** Client connections past the cap (answered 503 or closed). */
  connectionsRefused: number;
  /** Requests in progress through the proxy now, open upgrades included. */
  inflight: number;
  /**
   * Durations over the last minute (60 to 65 s), milliseconds: p50, p90 and p99 each within 1%
   * of the true quantile, and the max; each null when no request ended in it.
   */
  latencyMs: {
    /** From the request's head read to the response's end (or the client gone). */
    total: LatencySummary;
    /** From the request sent upstream to the upstream's response received in full. */
    upstream: LatencySummary;
  };
  /** The last minute, second by second, oldest first. */
  perSecond: SecondCounts[];
  /** Bytes of memory, fixed whatever the number of clients. */
  memoryBytes: {
    /** Bytes of every limit's sketches. */
    limits: number;
    /** Bytes of the status page's sketches: each limit's hot keys, and the latencies. */
    status: number;
  };
  /** Each limit's status, in the order of the options' `limits`. */
  limits: LimitStatus[];
}

const NO_SKETCH = { width: 0, depth: 0, epsilon: 0, delta: 0 };

/** The state of `proxy` now, as plain data (a new object each call). */
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
      total: traffic.total.lastMinute(),
      upstream: traffic.upstream.lastMinute(),
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
