/**
 * Requests in progress across a fleet, with the hot path in process: `acquire`, `tryAcquire`,
 * `release` and `estimate` are synchronous and touch process memory only, as `Inflight`'s do;
 * every `syncMs` one round trip tells Redis what this process holds now and pulls the fleet's
 * counts (scripts.ts, INFLIGHT_SYNC_SCRIPT).
 *
 * What a process holds is exact here (`held`: its guards' amounts per cell) and absolute in
 * Redis: each process's contribution is a string of its own (`hotcount:{name}:p:<process id>`)
 * and a sync sends the cells that changed as their new values, so a sync sent again after a lost
 * reply changes nothing, and nothing a guard took or gave back is counted twice. The fleet's
 * view of a key is the counts as of the last sync, less this process's contribution then, plus
 * what it holds now. A process that dies is reaped as `RedisInflight`'s are: its lease
 * (`leaseMs`, renewed by every sync) ends, and the next sync of any process takes its whole
 * contribution back.
 *
 * The overshoot: like a local-first rate limiter's, a key may briefly have more than `limit`
 * holders across the fleet, at most what the other processes acquired since their last sync
 * and this one's last pull (docs/redis.md). While Redis is away, each process goes on deciding from the
 * last counts and its own holdings (`status`, 'stale' and 'sync' events as the others).
 */
import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { Dimensions, Key } from '../core.js';
import {
  checkCount,
  checkOptionNames,
  type InflightCounter,
  InflightGuard,
  integerIn,
  SATURATED,
  typeError,
} from '../core.js';
import { BYTES } from './client.js';
import { cellPairs, clamp } from './delta.js';
import { decodeCells, PLACE_OPTION_NAMES, type PlaceOptions, SketchPlace } from './place.js';
import { INFLIGHT_SYNC } from './scripts.js';
import { SyncLoop, type SyncStatus, syncTimeoutMs, withDeadline } from './staleness.js';

/** Options of `new LocalFirstInflight`: its place in Redis (PlaceOptions), syncs and lease. */
export interface LocalFirstInflightOptions extends PlaceOptions {
  /** Milliseconds between two syncs. Default 100. */
  syncMs?: number;
  /** How long a process's share outlives its last sync, in ms. Default 10,000. */
  leaseMs?: number;
  /** How long a sync may wait for Redis. Default 4 * syncMs, within 1000 and 3,600,000. */
  timeoutMs?: number;
}

const OPTION_NAMES = [...PLACE_OPTION_NAMES, 'syncMs', 'leaseMs', 'timeoutMs'];

/**
 * Requests in progress per key across a fleet, counted in process memory as Inflight counts
 * them: `acquire`, `tryAcquire`, `release` and `estimate` are synchronous, and one round trip
 * every `syncMs` tells Redis what this process holds and pulls the fleet's counts. A key may
 * briefly have more than `limit` holders across the fleet: at most what the other processes
 * acquired since their last sync and this one's last pull. Emits 'stale' (with the error) when a
 * sync fails and 'sync' when Redis answers again.
 */
export class LocalFirstInflight extends EventEmitter implements InflightCounter {
  /** The counter's name: its keys in Redis are `hotcount:{name}:...`. */
  readonly name: string;
  /** Counters per row. */
  readonly width: number;
  /** Rows. */
  readonly depth: number;
  /** Milliseconds between two syncs. */
  readonly syncMs: number;
  /** How long this process's share outlives its last sync in Redis, in ms. */
  readonly leaseMs: number;
  /** How long a sync may wait for Redis before it counts as failed, in ms. */
  readonly timeoutMs: number;
  /** This instance's id in Redis: in the leases, and its share `hotcount:{name}:p:<processId>`. */
  readonly processId = randomUUID();
  private readonly place: SketchPlace;
  private readonly keys: [string, string, string, string];
  private readonly contributions: string;
  /** The fleet's counts as of the last sync. */
  private readonly counts: Int32Array;
  /** What this process holds now, exactly. */
  private readonly held: Int32Array;
  /** What Redis holds of this process, as of the last sync. */
  private readonly sent: Int32Array;
  private readonly loop: SyncLoop;

  /**
   * Throws a TypeError or RangeError that names the option at fault (RangeError too when
   * `leaseMs` is not more than twice `syncMs`). Sends nothing to Redis: the first sync, `syncMs`
   * later (a timer that does not keep the process alive), checks the shape.
   */
  constructor(options: LocalFirstInflightOptions) {
    super();
    if (options === null || typeof options !== 'object') {
      throw typeError('options', 'an object with redis, name and secret', options);
    }
    checkOptionNames('options', options, OPTION_NAMES);
    const { syncMs = 100, leaseMs = 10_000, timeoutMs, ...where } = options;
    this.syncMs = integerIn('syncMs', syncMs, 1, 3_600_000);
    this.leaseMs = integerIn('leaseMs', leaseMs, 30, 86_400_000);
    if (this.leaseMs <= 2 * this.syncMs) {
      throw new RangeError(
        `leaseMs (${this.leaseMs}) must be more than twice syncMs (${this.syncMs}): every sync renews the lease`,
      );
    }
    const defaultTimeoutMs = syncTimeoutMs(this.syncMs);
    this.timeoutMs = integerIn('timeoutMs', timeoutMs ?? defaultTimeoutMs, 1, 3_600_000);
    const place = new SketchPlace(where, 'inflight_local_first', 'inflight', 'kind or shape');
    this.place = place;
    this.name = place.name;
    this.width = place.width;
    this.depth = place.depth;
    this.contributions = place.key('p:');
    this.keys = [
      place.key('cells'),
      place.header,
      place.key('leases'),
      `${this.contributions}${this.processId}`,
    ];
    const size = place.width * place.depth;
    this.counts = new Int32Array(size);
    this.held = new Int32Array(size);
    this.sent = new Int32Array(size);
    this.loop = new SyncLoop(this, this.syncMs, () => this.sync());
  }

  /** Whether the last sync reached Redis, when Redis last answered, and the failure if not. */
  get status(): SyncStatus {
    return this.loop.staleness.status;
  }

  /** Its three arrays of width x depth cells: the fleet's, what it holds, what Redis has. */
  get memoryBytes(): number {
    return 3 * 4 * this.width * this.depth;
  }

  /** Width and depth of its sketch, and the epsilon and delta they give. */
  get dimensions(): Dimensions {
    return this.place.dimensions;
  }

  /**
   * Requests in progress over every key and the whole fleet, as this process sees them: a row's
   * sum (every acquisition adds to every row). A pass over a row: for status pages, not per
   * request.
   */
  get total(): number {
    let total = 0;
    for (let cell = 0; cell < this.width; cell++) total += this.fleetCell(cell);
    return total;
  }

  /** epsilon * total, as for a local Inflight. */
  get errorBound(): number {
    return this.dimensions.epsilon * this.total;
  }

  /** The key's estimate over the fleet, from process memory. */
  estimate(key: Key): number {
    return this.least(this.place.cellsInPlace(key));
  }

  /** Adds `n` (default 1) to `key`; the guard gives it back. */
  acquire(key: Key, n = 1): InflightGuard {
    checkCount('n', n, 1);
    const place = this.place;
    const cells = place.cellsInPlace(key);
    this.add(cells, n);
    return new InflightGuard(this, place.h1, place.h2, n, this.least(cells));
  }

  /** Adds `n` (default 1) to `key` if its estimate stays within `limit`; else null. */
  tryAcquire(key: Key, limit: number, n = 1): InflightGuard | null {
    checkCount('limit', limit, 1);
    checkCount('n', n, 1);
    const place = this.place;
    const cells = place.cellsInPlace(key);
    const count = this.least(cells) + n;
    if (count > limit) return null;
    this.add(cells, n);
    return new InflightGuard(this, place.h1, place.h2, n, count);
  }

  /** @internal A guard's release: its amount back, from the cells of its hash. */
  giveBack(_guard: InflightGuard, h1: number, h2: number, n: number): void {
    this.add(this.place.cellsOfHash(h1, h2), -n);
  }

  private add(cells: Int32Array, n: number): void {
    const held = this.held;
    for (let row = 0; row < this.depth; row++) held[cells[row]] += n;
  }

  /** The least over the key's cells of the fleet's counts, with this process's as it is now. */
  private least(cells: Int32Array): number {
    let least = SATURATED;
    for (let row = 0; row < this.depth; row++) {
      const value = this.fleetCell(cells[row]);
      if (value < least) least = value;
    }
    return least;
  }

  /** A cell over the fleet: its count at the last sync, with this process's share as it is now. */
  private fleetCell(cell: number): number {
    return clamp(this.counts[cell] - this.sent[cell] + this.held[cell]);
  }

  /**
   * Tells Redis what this process holds and pulls the fleet's counts, once; rejects when Redis
   * fails or does not answer within `timeoutMs`. A sync already running is joined.
   */
  flush(): Promise<void> {
    return this.loop.flush();
  }

  private async sync(): Promise<void> {
    // The cells whose value Redis does not have, as they are now.
    const pairs = cellPairs(this.held, this.sent);
    const args = [this.place.shape, this.processId, this.leaseMs, this.contributions, pairs];
    let reply: [Buffer, number];
    try {
      reply = await withDeadline(
        this.place.redis.run(INFLIGHT_SYNC, this.keys, args, BYTES) as Promise<[Buffer, number]>,
        this.timeoutMs,
      );
    } catch (error) {
      throw this.place.refusal(error);
    }
    const [stored, fresh] = reply;
    // Redis held nothing of this process before this sync: it now has the changed cells only.
    const sent = this.sent;
    if (fresh === 1) sent.fill(0);
    for (let at = 0; at < pairs.length; at += 8)
      sent[pairs.readUInt32BE(at)] = pairs.readInt32BE(at + 4);
    decodeCells(stored, this.counts);
  }

  /** Stops syncing; what this process holds goes from Redis leaseMs after its last sync. */
  close(): void {
    this.loop.stop();
  }
}
