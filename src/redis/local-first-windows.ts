/**
 * A local-first limiter's windows: for the current and the previous aligned window, the
 * snapshot of what Redis holds (pulled by the last sync) and the delta this process counted and
 * has not yet seen applied. The limiter reads snapshot + delta, from process memory only; every
 * `syncMs` the sync pushes each window's delta into that window's Redis string (the plain rule:
 * deltas of many processes add up in any order) and pulls both windows back, one round trip (two
 * right after a window rolls, while the previous window's last counts go out).
 *
 * The deltas rotate over three slots like limits/windows.ts: window n in slot n mod 3. A window
 * two behind the clock no longer counts in any decision and its string expires in Redis; its
 * unsent delta, if Redis was away that long, is dropped with it. A push in flight for a delta
 * dropped meanwhile is harmless: it lands in a string that no longer counts, and its reply
 * clears nothing (Delta.sent checks the push's number).
 */
import { readClock } from '../core.js';
import { BYTES } from './client.js';
import { Delta } from './delta.js';
import { decodeCells, type SketchPlace } from './place.js';
import { WINDOW_PUSH } from './scripts.js';
import { withDeadline } from './staleness.js';

function slotOf(window: number): number {
  return ((window % 3) + 3) % 3;
}

export class LocalFirstWindows {
  readonly windowMs: number;
  /** Redis's cells of the current window, and of the previous one, as last pulled. */
  current: Int32Array;
  previous: Int32Array;
  currentDelta: Delta;
  previousDelta: Delta;
  /** The current window's number and start, and the clock's time at the last `advance`. */
  window = Number.NaN;
  start = 0;
  time = 0;
  private readonly deltas: Delta[];
  private readonly place: SketchPlace;
  private readonly now: () => number;
  /** The key of this process's last applied push (see scripts.ts, PUSH_SCRIPT). */
  private readonly pushed: string;
  private seq = 0;

  constructor(place: SketchPlace, windowMs: number, now: () => number, pushed: string) {
    const size = place.width * place.depth;
    this.place = place;
    this.windowMs = windowMs;
    this.now = now;
    this.pushed = pushed;
    this.current = new Int32Array(size);
    this.previous = new Int32Array(size);
    this.deltas = [new Delta(size), new Delta(size), new Delta(size)];
    this.currentDelta = this.deltas[0];
    this.previousDelta = this.deltas[1];
  }

  /** Reads the clock; on a new window, rolls. A clock that steps back stands still. */
  advance(): void {
    const time = readClock(this.now);
    const window = Math.floor(time / this.windowMs);
    if (window !== this.window) {
      if (window < this.window) {
        this.time = this.start;
        return;
      }
      this.roll(window);
    }
    this.time = time;
  }

  private roll(window: number): void {
    if (window === this.window + 1) {
      const previous = this.previous;
      this.previous = this.current;
      this.current = previous;
      this.current.fill(0);
    } else {
      this.current.fill(0);
      this.previous.fill(0);
    }
    this.previousDelta = this.held(window - 1);
    this.currentDelta = this.held(window);
    this.window = window;
    this.start = window * this.windowMs;
  }

  /** The delta of `window`, emptied for it unless it already holds it. */
  private held(window: number): Delta {
    const delta = this.deltas[slotOf(window)];
    if (delta.tag !== window) delta.reset(window);
    return delta;
  }

  /**
   * Pushes the unsent deltas of the previous and the current window, and pulls both windows;
   * rejects when Redis fails or does not answer within `timeoutMs` (what was not applied stays,
   * to be sent again, with its number, by the next sync).
   */
  async sync(timeoutMs: number): Promise<void> {
    this.advance();
    const now = this.window;
    for (const window of [now - 1, now]) {
      const delta = this.deltas[slotOf(window)];
      if (delta.tag !== window || (window !== now && !delta.unsent)) continue;
      const seq = delta.take(this.seq + 1);
      if (seq > this.seq) this.seq = seq;
      // The window's string expires at the end of the window after it (the caller's clock).
      const expireMs = Math.max(1, Math.ceil((window + 2) * this.windowMs - this.time));
      const args = [this.place.shape, expireMs, seq, delta.increments()];
      const keys = [
        this.place.windowKey(window),
        this.place.header,
        this.pushed,
        this.place.windowKey(window - 1),
      ];
      const push = this.place.redis.run(WINDOW_PUSH, keys, args, BYTES) as Promise<
        [Buffer, Buffer]
      >;
      const [stored, before] = await withDeadline(push, timeoutMs);
      // The clock may have rolled meanwhile: each string goes where its window now is.
      if (this.window === window) {
        decodeCells(stored, this.current);
        decodeCells(before, this.previous);
      } else if (this.window === window + 1) {
        decodeCells(stored, this.previous);
      }
      delta.sent(seq);
    }
  }
}
