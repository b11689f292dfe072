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
import { HeavyHitters, type Key, Rate } from '../index.js';
import { Latency } from './latency.js';
import { SecondRing } from './seconds.js';

export const OUTCOMES = ['allowed', 'rate_limited', 'inflight_limited'] as const;
export type Outcome = (typeof OUTCOMES)[number];

/** Seconds of history kept for the chart. */
export const HISTORY_S = 60;

export interface SecondCounts {
  /** Start of the second, epoch milliseconds. */
  t: number;
  allowed: number;
  rate_limited: number;
  inflight_limited: number;
}

/** Totals and a per-second history of outcomes. */
export class Traffic {
  readonly totals: Record<Outcome, number> = { allowed: 0, rate_limited: 0, inflight_limited: 0 };
  readonly upstreamErrors = { refused: 0, timeout: 0 };
  /** Requests refused before any limit: a target too long (414), ambiguous framing (400). */
  readonly rejected = { url: 0, framing: 0 };
  /** Client connections past `maxConnections`: answered 503, or past twice it closed. */
  connectionsRefused = 0;
  /** Requests in progress through the proxy. */
  inflight = 0;
  /** From the request's head read to the response's end (or the client gone). */
  readonly total: Latency;
  /** From the request sent upstream to the upstream's response received in full. */
  readonly upstream: Latency;
  private readonly ring: SecondRing;

  constructor(now: () => number = Date.now) {
    this.ring = new SecondRing(HISTORY_S, OUTCOMES.length, now);
    this.total = new Latency(now);
    this.upstream = new Latency(now);
  }

  record(outcome: Outcome): void {
    this.totals[outcome]++;
    this.ring.cells[this.ring.row() + OUTCOMES.indexOf(outcome)]++;
  }

  /** The last HISTORY_S whole seconds, oldest first. */
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

/** The hot keys of one limit. */
export class HotKeys {
  private readonly hitters = new HeavyHitters({ k: 10, width: 4096, halfLifeMs: 30_000 });
  private readonly rate = new Rate({ windowMs: 10_000, width: 4096 });
  private readonly inProgress = new Map<string, number>();

  seen(key: Key): void {
    this.hitters.add(key);
    this.rate.observe(key);
  }

  entered(key: Key): void {
    const name = String(key);
    this.inProgress.set(name, (this.inProgress.get(name) ?? 0) + 1);
  }

  left(key: Key): void {
    const name = String(key);
    const count = (this.inProgress.get(name) ?? 0) - 1;
    if (count > 0) this.inProgress.set(name, count);
    else this.inProgress.delete(name);
  }

  /** Up to `n` keys by requests per second (sliding over 10 s windows), highest first. */
  byRate(n = 10): { key: string; perSecond: number }[] {
    return this.hitters
      .top(n)
      .map(({ key }) => ({ key: String(key), perSecond: this.rate.rate(key) }))
      .filter((entry) => entry.perSecond > 0)
      .sort((a, b) => b.perSecond - a.perSecond);
  }

  /** Up to `n` keys by requests in progress, highest first. */
  byInflight(n = 10): { key: string; inflight: number }[] {
    return [...this.inProgress]
      .map(([key, inflight]) => ({ key, inflight }))
      .sort((a, b) => b.inflight - a.inflight)
      .slice(0, n);
  }

  get memoryBytes(): number {
    return this.hitters.sketch.memoryBytes + this.rate.memoryBytes;
  }
}
