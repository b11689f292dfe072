/**
 * What the status page and /metrics show of the traffic: totals by outcome, the last minute
 * second by second, and for each limit the keys that are hot now.
 *
 * Hot keys by rate come from the sketches too, so that a million clients cost the status page
 * no more memory than ten: `HeavyHitters` (a sketch in front of a small exact table, halving
 * every 30 s so that it tracks what is hot now) picks the candidates, and a `Rate` over 10 s
 * windows gives each its requests per second. Keys in progress are counted exactly: there are
 * never more of them than open connections.
 */
import { HeavyHitters, type Key, Rate } from '../core.js';
import { Latency } from './latency.js';
import { SecondRing } from './seconds.js';

/** The outcomes, in the order the per-second rows hold them. */
export const OUTCOMES = ['allowed', 'rate_limited', 'inflight_limited'] as const;
/**
 * What the proxy decided for a request: let through ('allowed'), refused 429 for its rate
 * ('rate_limited'), or refused 503 for its requests in progress ('inflight_limited').
 *
 * @useDeclaredType
 */
export type Outcome = (typeof OUTCOMES)[number];

/** Seconds of history kept for the chart. */
export const HISTORY_S = 60;

/** One second's requests, by outcome. */
export interface SecondCounts {
  /** Start of the second, epoch milliseconds. */
  t: number;
  /** Requests let through. */
  allowed: number;
  /** Requests refused for their rate (429). */
  rate_limited: number;
  /** Requests refused for their requests in progress (503). */
  inflight_limited: number;
}

/**
 * Totals and a per-second history of outcomes, and the latencies: a proxy's `traffic`, which
 * it updates (read it, do not write it).
 */
export class Traffic {
  /** Requests decided since the start, by outcome. */
  readonly totals: Record<Outcome, number> = { allowed: 0, rate_limited: 0, inflight_limited: 0 };
  /**
   * Requests the upstream failed since the start: refused or reset, or no HTTP answer (502);
   * silent past the timeout (504).
   */
  readonly upstreamErrors = {
    /** Refused or reset the connection, or no HTTP answer (502). */
    refused: 0,
    /** Silent past the timeout (504). */
    timeout: 0,
  };
  /** Requests refused before any limit: a target too long (414), ambiguous framing (400). */
  readonly rejected = {
    /** Request targets over `maxUrlLength` (414). */
    url: 0,
    /** Requests whose framing two parsers could read differently (400). */
    framing: 0,
  };
  /** Client connections past `maxConnections`: answered 503, or past twice it closed. */
  connectionsRefused = 0;
  /** Requests in progress through the proxy. */
  inflight = 0;
  /** From the request's head read to the response's end (or the client gone). */
  readonly total: Latency;
  /** From the request sent upstream to the upstream's response received in full. */
  readonly upstream: Latency;
  private readonly ring: SecondRing;

  /** @internal Made by the proxy; `now` is the clock, in epoch milliseconds. */
  constructor(now: () => number = Date.now) {
    this.ring = new SecondRing(HISTORY_S, OUTCOMES.length, now);
    this.total = new Latency(now);
    this.upstream = new Latency(now);
  }

  /** @internal Counts one request's outcome, in the totals and the current second. */
  record(outcome: Outcome): void {
    this.totals[outcome]++;
    this.ring.cells[this.ring.row() + OUTCOMES.indexOf(outcome)]++;
  }

  /** The last 60 whole seconds (HISTORY_S), oldest first; the second under way is not in it. */
  history(): SecondCounts[] {
    const ring = this.ring;
    ring.row();
    const out: SecondCounts[] = [];
    for (let back = HISTORY_S; back >= 1; back--) {
      const second = ring.second - back;
      const at = ring.rowOf(second);
      out.push({
        t: second * 1000,
        allowed: ring.cells[at],
        rate_limited: ring.cells[at + 1],
        inflight_limited: ring.cells[at + 2],
      });
    }
    return out;
  }
}

/**
 * The hot keys of one limit: by rate from sketches (fixed memory), by requests in progress
 * exactly. The proxy feeds it; read it through `byRate` and `byInflight`.
 */
export class HotKeys {
  private readonly hitters = new HeavyHitters({ k: 10, width: 4096, halfLifeMs: 30_000 });
  private readonly rate = new Rate({ windowMs: 10_000, width: 4096 });
  private readonly inProgress = new Map<string, number>();

  /** @internal Counts a request of `key` for the rate. */
  seen(key: Key): void {
    this.hitters.add(key);
    this.rate.observe(key);
  }

  /** @internal A request of `key` let through: one more in progress. */
  entered(key: Key): void {
    const name = String(key);
    this.inProgress.set(name, (this.inProgress.get(name) ?? 0) + 1);
  }

  /** @internal A request of `key` ended: one fewer in progress. */
  left(key: Key): void {
    const name = String(key);
    const count = (this.inProgress.get(name) ?? 0) - 1;
    if (count > 0) this.inProgress.set(name, count);
    else this.inProgress.delete(name);
  }

  /** Up to `n` keys by requests per second (sliding over 10 s windows), highest first. */
  byRate(n = 10): {
    /** The key, as text. */
    key: string;
    /** Its requests per second. */
    perSecond: number;
  }[] {
    return this.hitters
      .top(n)
      .map(({ key }) => ({ key: String(key), perSecond: this.rate.rate(key) }))
      .filter((entry) => entry.perSecond > 0)
      .sort((a, b) => b.perSecond - a.perSecond);
  }

  /** Up to `n` keys by requests in progress, highest first. */
  byInflight(n = 10): {
    /** The key, as text. */
    key: string;
    /** Its requests in progress. */
    inflight: number;
  }[] {
    return [...this.inProgress]
      .map(([key, inflight]) => ({ key, inflight }))
      .sort((a, b) => b.inflight - a.inflight)
      .slice(0, n);
  }

  /** Bytes of the sketches that find the keys by rate (fixed, whatever the number of keys). */
  get memoryBytes(): number {
    return this.hitters.sketch.memoryBytes + this.rate.memoryBytes;
  }
}
