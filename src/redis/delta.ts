/**
 * What a local-first process counted and Redis has not yet applied, in fixed memory: one cell
 * per sketch cell, in two arrays. `pending` takes new counts; a push takes them into `sending`
 * under a sequence number and, if it fails, is sent again as it was (same cells, same number)
 * until Redis answers, while new counts go on into `pending`. Redis applies a process's push only
 * if its number is above the last one it applied (scripts.ts, PUSH_SCRIPT), so a push whose reply
 * was lost and that is sent again counts once.
 */
import { SATURATED } from '../core.js';

export function clamp(value: number): number {
  return Math.min(SATURATED, Math.max(-SATURATED, value));
}

/**
 * The cells of `values` that differ from `base` (from 0 when null), as (cell u32, value i32)
 * pairs, big-endian, in one buffer: one argument to Redis however many cells there are (see
 * scripts.ts, PUSH_SCRIPT and INFLIGHT_SYNC_SCRIPT).
 */
export function cellPairs(values: Int32Array, base: Int32Array | null): Buffer {
  let count = 0;
  for (let cell = 0; cell < values.length; cell++) {
    if (values[cell] !== (base === null ? 0 : base[cell])) count++;
  }
  const pairs = Buffer.allocUnsafe(count * 8);
  let at = 0;
  for (let cell = 0; cell < values.length; cell++) {
    if (values[cell] === (base === null ? 0 : base[cell])) continue;
    pairs.writeUInt32BE(cell, at);
    pairs.writeInt32BE(values[cell], at + 4);
    at += 8;
  }
  return pairs;
}

export class Delta {
  /** Counted since the push in flight was taken. */
  pending: Int32Array;
  pendingTotal = 0;
  /** The push in flight (or failed, to be sent again). */
  sending: Int32Array;
  sendingTotal = 0;
  /** The push's number while one is in flight or failed; 0 when none. */
  sendingSeq = 0;
  /** Whether anything was added to `pending` since it was last taken. */
  dirty = false;
  /** What the delta is for (a window's number), for whoever rotates deltas. */
  tag = Number.NaN;

  constructor(size: number) {
    this.pending = new Int32Array(size);
    this.sending = new Int32Array(size);
  }

  /** Adds `by` to each of the first `count` of `cells`. */
  add(cells: Int32Array, count: number, by: number): void {
    const pending = this.pending;
    for (let i = 0; i < count; i++) pending[cells[i]] = clamp(pending[cells[i]] + by);
    this.pendingTotal += by;
    this.dirty = true;
  }

  /** What is on its way and counted here at `cell`. */
  at(cell: number): number {
    return this.sending[cell] + this.pending[cell];
  }

  /** Whether there is something to push: a failed push, or counts since the last. */
  get unsent(): boolean {
    return this.sendingSeq !== 0 || this.dirty;
  }

  /**
   * The push to send: the failed one again, else what is pending, numbered `seq`. Returns its
   * number.
   */
  take(seq: number): number {
    if (this.sendingSeq === 0) {
      const taken = this.pending;
      this.pending = this.sending;
      this.sending = taken;
      this.sendingTotal = this.pendingTotal;
      this.pendingTotal = 0;
      this.dirty = false;
      this.sendingSeq = seq;
    }
    return this.sendingSeq;
  }

  /** The push's cells as (cell, amount) pairs in one buffer (see `cellPairs`). */
  pairs(): Buffer {
    return cellPairs(this.sending, null);
  }

  /**
   * The push's cells as BITFIELD subcommands, `INCRBY i32 #cell amount` each (see scripts.ts,
   * WINDOW_PUSH_SCRIPT): one array, which the client flattens into the command's arguments.
   */
  increments(): string[] {
    const sending = this.sending;
    const tokens: string[] = [];
    for (let cell = 0; cell < sending.length; cell++) {
      if (sending[cell] !== 0) tokens.push('INCRBY', 'i32', `#${cell}`, String(sending[cell]));
    }
    return tokens;
  }

  /** Push `seq` was applied (unless a newer push was taken meanwhile): it is in Redis now. */
  sent(seq: number): void {
    if (this.sendingSeq !== seq) return;
    this.sending.fill(0);
    this.sendingTotal = 0;
    this.sendingSeq = 0;
  }

  /** Forgets everything (a window that no longer counts), for `tag`. */
  reset(tag: number): void {
    this.pending.fill(0);
    this.sending.fill(0);
    this.pendingTotal = 0;
    this.sendingTotal = 0;
    this.sendingSeq = 0;
    this.dirty = false;
    this.tag = tag;
  }
}
