/**
 * A sketch in Redis with the hot path in process: `increment` and `estimate` are synchronous
 * and touch process memory only; every `syncMs` one round trip pushes what this process
 * counted since (its delta) and pulls the whole sketch back (the snapshot). The answer is the
 * snapshot plus the delta not yet in it, so Redis commands per second depend on the number of
 * processes and `syncMs`, never on the request rate. It writes the sketch a `RedisCountMinSketch`
 * of the same name, shape and secret reads (plain rule: deltas add up, whatever their order).
 *
 * Nothing counted is lost when Redis is away: the delta keeps accumulating in a fixed-size
 * array (one cell per sketch cell, so memory is fixed), and a push that failed is sent again,
 * the same push with the same number, until Redis answers. Redis applies a push only if its
 * number is above the last it applied for this process (scripts.ts), so a push whose
 * reply was lost, sent again, counts once. Meanwhile the sketch answers from the last snapshot
 * and the local delta, and says so: `status.stale`, the 'stale' and 'sync' events.
 */
import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { Key } from '../core.js';
import { checkAmount, checkOptionNames, integerIn, SATURATED, typeError } from '../core.js';
import { BYTES } from './client.js';
import { clamp, Delta } from './delta.js';
import { decodeCells, PLACE_OPTION_NAMES, type PlaceOptions, SketchPlace } from './place.js';
import { PUSH } from './scripts.js';
import { SyncLoop, type SyncStatus, syncTimeoutMs, withDeadline } from './staleness.js';

/** Options of `new LocalFirstSketch`: its place in Redis (PlaceOptions) and its syncs. */
export interface LocalFirstOptions extends PlaceOptions {
  /** Milliseconds between two syncs (push the delta, pull the snapshot). Default 100. */
  syncMs?: number;
  /**
   * How long a sync may wait for Redis before it counts as failed (the sketch goes stale; the
   * push is sent again, safely, by the next sync). Default 4 * syncMs, within 1000 and 3,600,000.
   */
  timeoutMs?: number;
}

/** What `LocalFirstSketch.status` returns: whether the last sync reached Redis, and when. */
export type LocalFirstStatus = SyncStatus;

const OPTION_NAMES = [...PLACE_OPTION_NAMES, 'syncMs', 'timeoutMs'];

/**
 * A Count-Min sketch in Redis, shared by a fleet, that counts and answers from process memory:
 * `increment` and `estimate` are synchronous, and one round trip every `syncMs` pushes this
 * process's counts and pulls the fleet's (plain rule). Emits 'stale' (with the error) when a
 * sync fails and 'sync' when Redis answers again. Call `close` to push what is left.
 */
export class LocalFirstSketch extends EventEmitter {
  /** The sketch's name: its keys in Redis are `hotcount:{name}:...`. */
  readonly name: string;
  /** Counters per row. */
  readonly width: number;
  /** Rows. */
  readonly depth: number;
  /** Milliseconds between two syncs. */
  readonly syncMs: number;
  /** How long a sync may wait for Redis before it counts as failed, in ms. */
  readonly timeoutMs: number;
  /** The Redis keys this sketch uses. */
  readonly keys: {
    /** The sketch's cells, one string shared by every process of the name. */
    cells: string;
    /** The hash that holds the shape and the total. */
    header: string;
    /** Holds the number of the last push Redis applied from this instance (an id of its own). */
    pushed: string;
  };
  private readonly place: SketchPlace;
  /** The sketch in Redis as of the last sync. */
  private readonly snapshot: Int32Array;
  /** Counted here and not yet in the snapshot. */
  private readonly delta: Delta;
  private seq = 0;
  private readonly loop: SyncLoop;
  private closed = false;

  /**
   * Throws a TypeError or RangeError that names the option at fault. Sends nothing to Redis:
   * the first sync, `syncMs` later (a timer that does not keep the process alive), checks the
   * shape.
   */
  constructor(options: LocalFirstOptions) {
    super();
    if (options === null || typeof options !== 'object') {
      throw typeError('options', 'an object with redis, name and secret', options);
    }
    checkOptionNames('options', options, OPTION_NAMES);
    const { syncMs = 100, timeoutMs, ...where } = options;
    // The plain rule: deltas from many processes add up whatever their order.
    const place = new SketchPlace(where, 'plain', 'sketch', 'shape or rule');
    this.place = place;
    this.name = place.name;
    this.width = place.width;
    this.depth = place.depth;
    this.syncMs = integerIn('syncMs', syncMs, 1, 3_600_000);
    this.timeoutMs = integerIn('timeoutMs', timeoutMs ?? syncTimeoutMs(this.syncMs), 1, 3_600_000);
    // Each instance pushes under an id of its own: its sequence numbers start over with it.
    this.keys = {
      cells: place.key('cells'),
      header: place.header,
      pushed: place.key(`pushed:${randomUUID()}`),
    };
    const size = place.width * place.depth;
    this.snapshot = new Int32Array(size);
    this.delta = new Delta(size);
    this.loop = new SyncLoop(this, this.syncMs, () => this.sync());
  }

  /** Adds `by` (default 1) to `key`; its estimate after, from process memory. */
  increment(key: Key, by = 1): number {
    checkAmount(by);
    return this.add(key, by);
  }

  /**
   * Subtracts `by` (default 1) from `key`; its estimate after, from process memory. Estimates
   * stay upper bounds only while no key's true count goes below zero. TypeError for a key or
   * `by` of the wrong kind, RangeError for a `by` that is not an integer from 0 to 2^31 - 1.
   */
  decrement(key: Key, by = 1): number {
    checkAmount(by);
    return this.add(key, -by);
  }

  /** The key's estimate: the snapshot, the push in flight and the local delta, added. */
  estimate(key: Key): number {
    return this.least(this.place.cellsInPlace(key));
  }

  /** Whether the last sync reached Redis, when Redis last answered, and the failure if not. */
  get status(): LocalFirstStatus {
    return this.loop.staleness.status;
  }

  private add(key: Key, by: number): number {
    const cells = this.place.cellsInPlace(key);
    this.delta.add(cells, this.depth, by);
    return this.least(cells);
  }

  /** The least over `cells` of what Redis has, what is on its way and what is counted here. */
  private least(cells: Int32Array): number {
    let least = SATURATED;
    for (let row = 0; row < this.depth; row++) {
      const cell = cells[row];
      const value = clamp(this.snapshot[cell] + this.delta.at(cell));
      if (value < least) least = value;
    }
    return least;
  }

  /**
   * Pushes the delta and pulls the snapshot, once; resolves when done, rejects when Redis
   * failed or did not answer within `timeoutMs` (then the delta stays, to be pushed by the next
   * sync). A sync already running is joined, not doubled.
   */
  flush(): Promise<void> {
    return this.loop.flush();
  }

  private async sync(): Promise<void> {
    const delta = this.delta;
    const seq = delta.take(this.seq + 1);
    if (seq > this.seq) this.seq = seq;
    const args = [this.place.shape, '', seq, delta.sendingTotal, delta.pairs()];
    const { cells, header, pushed } = this.keys;
    let stored: Buffer;
    try {
      const push = this.place.redis.run(
        PUSH,
        [cells, header, pushed],
        args,
        BYTES,
      ) as Promise<Buffer>;
      stored = await withDeadline(push, this.timeoutMs);
    } catch (error) {
      throw this.place.refusal(error);
    }
    decodeCells(stored, this.snapshot);
    delta.sent(seq);
  }

  /** Stops the timer and pushes what is left (rejects if Redis cannot take it). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.loop.stop();
    await this.flush();
    if (this.delta.unsent) await this.flush();
  }
}
