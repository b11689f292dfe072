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
import { checkOptionNames, integerIn, typeError } from '../errors.js';
import type { Key } from '../hash/key-hasher.js';
import { checkAmount } from '../sketch/count-min.js';
import { decodeCells, PLACE_OPTION_NAMES, type PlaceOptions, SketchPlace } from './place.js';

export interface LocalFirstOptions extends PlaceOptions {
  /** Milliseconds between two syncs (push the delta, pull the snapshot). Default 100. */
  syncMs?: number;
}

export interface LocalFirstStatus {
  /** True while the last sync failed: answers are the last snapshot plus the local delta. */
  stale: boolean;
  /** When the last sync succeeded (Date.now()), or null before the first. */
  lastSyncAt: number | null;
  /** The last sync's error, while stale. */
  error: Error | null;
}

const OPTION_NAMES = [...PLACE_OPTION_NAMES, 'syncMs'];
const SATURATED = 0x7fffffff;

function clamp(value: number): number {
  return Math.min(SATURATED, Math.max(-SATURATED, value));
}

export class LocalFirstSketch extends EventEmitter {
  readonly name: string;
  readonly width: number;
  readonly depth: number;
  readonly syncMs: number;
  readonly keys: { cells: string; header: string; pushed: string };
  private readonly place: SketchPlace;
  /** The sketch in Redis as of the last sync. */
  private readonly snapshot: Int32Array;
  /** Counted here since the push in flight was taken: not in Redis yet. */
  private pending: Int32Array;
  private pendingTotal = 0;
  /** The push in flight (or failed, to be sent again), and its number; 0 when none. */
  private sending: Int32Array;
  private sendingTotal = 0;
  private sendingSeq = 0;
  private seq = 0;
  private syncing: Promise<void> | null = null;
  private readonly timer: NodeJS.Timeout;
  private closed = false;
  private state: LocalFirstStatus = { stale: false, lastSyncAt: null, error: null };

  constructor(options: LocalFirstOptions) {
    super();
    if (options === null || typeof options !== 'object') {
      throw typeError('options', 'an object with redis, name and secret', options);
    }
    checkOptionNames('options', options, OPTION_NAMES);
    const { syncMs = 100, ...where } = options;
    // The plain rule: deltas from many processes add up whatever their order.
    const place = new SketchPlace(where, 'plain');
    this.place = place;
    this.name = place.name;
    this.width = place.width;
    this.depth = place.depth;
    this.syncMs = integerIn('syncMs', syncMs, 1, 3_600_000);
    // Each instance pushes under an id of its own: its sequence numbers start over with it.
    this.keys = {
      cells: place.key('cells'),
      header: place.header,
      pushed: place.key(`pushed:${randomUUID()}`),
    };
    const size = place.width * place.depth;
    this.snapshot = new Int32Array(size);
    this.pending = new Int32Array(size);
    this.sending = new Int32Array(size);
    this.timer = setInterval(() => void this.flush().catch(() => {}), this.syncMs);
    this.timer.unref();
  }

  /** Adds `by` (default 1) to `key`; its estimate after, from process memory. */
  increment(key: Key, by = 1): number {
    checkAmount(by);
    return this.add(key, by);
  }

  decrement(key: Key, by = 1): number {
    checkAmount(by);
    return this.add(key, -by);
  }

  /** The key's estimate: the snapshot, the push in flight and the local delta, added. */
  estimate(key: Key): number {
    return this.least(this.place.cellsOf(key));
  }

  get status(): LocalFirstStatus {
    return { ...this.state };
  }

  private add(key: Key, by: number): number {
    const cells = this.place.cellsOf(key);
    const pending = this.pending;
    for (const cell of cells) pending[cell] = clamp(pending[cell] + by);
    this.pendingTotal += by;
    return this.least(cells);
  }

  /** The least over `cells` of what Redis has, what is on its way and what is counted here. */
  private least(cells: number[]): number {
    let least = SATURATED;
    for (const cell of cells) {
      const value = clamp(this.snapshot[cell] + this.sending[cell] + this.pending[cell]);
      if (value < least) least = value;
    }
    return least;
  }

  /**
   * Pushes the delta and pulls the snapshot, once; resolves when done, rejects when Redis
   * failed (then the delta stays, to be pushed by the next sync). A sync already running is
   * joined, not doubled.
   */
  flush(): Promise<void> {
    if (this.syncing === null) {
      this.syncing = this.sync().finally(() => {
        this.syncing = null;
      });
    }
    return this.syncing;
  }

  private async sync(): Promise<void> {
    if (this.sendingSeq === 0) {
      // Take what was counted into a new push; a failed push is sent again as it was.
      const taken = this.pending;
      this.pending = this.sending;
      this.sending = taken;
      this.sendingTotal = this.pendingTotal;
      this.pendingTotal = 0;
      this.sendingSeq = ++this.seq;
    }
    const args: (string | number)[] = [this.place.shape, '', this.sendingSeq, this.sendingTotal];
    const sending = this.sending;
    for (let cell = 0; cell < sending.length; cell++) {
      if (sending[cell] !== 0) args.push(cell, sending[cell]);
    }
    const { cells, header, pushed } = this.keys;
    try {
      const stored = await this.place.redis.hotcountPushBuffer(cells, header, pushed, ...args);
      decodeCells(stored.length === 0 ? null : stored, this.snapshot);
    } catch (error) {
      const wasStale = this.state.stale;
      this.state = { stale: true, lastSyncAt: this.state.lastSyncAt, error: error as Error };
      if (!wasStale) this.emit('stale', error);
      throw error;
    }
    sending.fill(0);
    this.sendingTotal = 0;
    this.sendingSeq = 0;
    this.state = { stale: false, lastSyncAt: Date.now(), error: null };
    this.emit('sync');
  }

  /** Stops the timer and pushes what is left (rejects if Redis cannot take it). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.timer);
    await this.flush();
    if (this.pendingTotal !== 0 || this.pending.some((value) => value !== 0)) await this.flush();
  }
}
