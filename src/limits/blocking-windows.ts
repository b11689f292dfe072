/**
 * A sliding-window limit that blocks, in fixed memory: the algorithm of @nestjs/throttler's
 * default storage. A key's hits over the last `ttlMs` are counted; the hit that takes them over
 * `limit` blocks the key for `blockMs`; hits while it is blocked are refused and not counted; the
 * first hit once the block has ended starts the key over at 1. `ttlMs`, `limit` and `blockMs`
 * come with every call, and a `scope` (the throttler's name) keeps the counts of one key under
 * several limits apart.
 *
 * Why not in sketch cells alone. The count after a block starts over, and a sketch cannot take a
 * key's hits back. Nor can it skip them safely: a key blocked here for a count that collisions
 * (or the coarse windows below) raised is not blocked by the algorithm it follows, which goes on
 * counting the hits refused here, so a count that left them out would let through a hit the
 * algorithm refuses. Counting every hit and blocking again on every hit over the limit is always
 * safe, but a client that pauses for the block would then still be refused for the hits it made
 * before it (a block shorter than ttl), where the algorithm lets it through.
 *
 * So, as ClientWindows does for the drop-in stores: recent clients are exact, in a table of fixed
 * capacity (typed arrays, a slot found by the keyed 64-bit hash of the key and scope, 8 slots per
 * bucket), and every hit is also counted in sketches, the backstop. A client in the table is
 * either `certain` or `unsure`:
 * - Certain: its slot mirrors the algorithm's state (blocked or not, until when, the hits it
 *   counts since the last start-over) and answers as the algorithm does. Its hits are kept in
 *   SLICES + 1 sub-windows of ttlMs / SLICES (count, first and last hit time): the windows that
 *   meet the last ttlMs give bounds of the algorithm's count, the windows wholly inside it and
 *   of the oldest one what its first and last hit times prove (all of its hits inside, none, or
 *   from one to all but one). A block whose lower bound is also over the limit is the algorithm's own block,
 *   and the client stays certain; one the coarse windows alone decided may not be, and makes the
 *   client unsure. When every hit falls on a multiple of ttlMs / SLICES, the two bounds are equal
 *   and the answers are exactly the algorithm's.
 * - Unsure: a client that came back after its slot was taken (with hits still counted or a block
 *   running), or after an uncertain block. Every hit is counted (in its slot and in the backstop,
 *   whichever is more), no start-over, and every hit over the limit blocks until blockMs after it.
 *   Never more lenient than the algorithm: its count is never under the algorithm's, and wherever
 *   the algorithm blocks, the count is over the limit here too. It becomes certain again once
 *   nothing is counted for it in its last ttlMs and no block runs (the algorithm then has nothing
 *   on it either: the next hit counts 1).
 * The backstop: per scope and ttlMs, SLICES + 1 Count-Min sketches in rotation (the same
 * sub-windows), and two max sketches (LatestTimes) for when a block ends and when the reported
 * window ends, so that a client pushed out of the table keeps them.
 *
 * A scope whose ttlMs changes from call to call (a throttler's ttl resolved per request) counts
 * each hit in the sketches of every ttlMs the scope has used, so that each reads the hits made
 * under the others; a ttlMs met for the first time has not seen the hits before it, for at most
 * its first ttlMs. The number of (scope, ttlMs) pairs is capped (MAX_RINGS), since a ttl may come
 * from a request. Two clients whose keyed 64-bit hashes are equal would share a slot: about
 * n^2 / 2^65 with n clients in the table, and the secret keeps anyone from choosing them.
 */
import { readClock } from '../clock.js';
import { rangeError } from '../errors.js';
import type { Key } from '../hash/key-hasher.js';
import { CountMinSketch } from '../sketch/count-min.js';
import { resolveDimensions } from '../sketch/dimensions.js';
import type { SketchHasher } from '../sketch/sketch-options.js';
import { LatestTimes } from './latest-times.js';
import { type LimitSketchOptions, sketchOptions } from './options.js';

/** Sub-windows per ttlMs: a hit may be counted up to ttlMs / SLICES longer than it lasts. */
export const SLICES = 4;
const RING = SLICES + 1;
const SLOTS_PER_BUCKET = 8;
/** The most (scope, ttlMs) pairs: each costs RING sketches, and a ttl may come from a request. */
export const MAX_RINGS = 64;
/** The most clients a table may hold: keeps a configuration typo from allocating gigabytes. */
export const MAX_BLOCKING_CAPACITY = 2 ** 22;
const CERTAIN = 0;
const UNSURE = 1;

/** The options of `new BlockingWindows`: the sketches' size, the table's, the clock. */
export interface BlockingWindowsOptions extends Omit<LimitSketchOptions, 'shared'> {
  /** Clients whose state is kept exactly (rounded up to a multiple of 8). Default 4096. */
  capacity?: number;
  /** The clock, in milliseconds. Default Date.now, read at each call. */
  now?: () => number;
}

/**
 * One call: the rule it asks for, set by the caller, and what it found, set by `hit`. Made once
 * and reused, so that a call allocates nothing.
 */
export class BlockingCall {
  /** Keeps one key's counts under several limits apart (a throttler's name). */
  scope = '';
  /** The window, in milliseconds: a finite number >= 1. */
  ttlMs = 1;
  /** Hits allowed in a window: a number >= 0. */
  limit = 0;
  /** How long the hit over the limit blocks, in milliseconds: a finite number >= 0. */
  blockMs = 0;
  /** The clock's time of the call. */
  time = 0;
  /** The key's count (the algorithm's totalHits, never under it). */
  totalHits = 0;
  /** Whether the key is blocked: refuse the hit. */
  blocked = false;
  /** When the key's reported window ends (the algorithm's expiresAt), ms of the clock. */
  expiresAt = 0;
  /** When its block ends (in the past, or 0, when none runs), ms of the clock. */
  blockedUntil = 0;
}

/** The sketches of one (scope, ttlMs): SLICES + 1 sub-windows in rotation. */
class Ring {
  readonly index: number;
  readonly ttlMs: number;
  readonly sketches: CountMinSketch[];
  /** The sub-window each sketch holds, NaN for none. */
  readonly windows = new Float64Array(RING).fill(Number.NaN);

  constructor(index: number, ttlMs: number, sketches: CountMinSketch[]) {
    this.index = index;
    this.ttlMs = ttlMs;
    this.sketches = sketches;
  }
}

/** A scope: its salt (so that one key's slots and max-sketch cells differ per scope) and rings. */
class Scope {
  readonly salt1: number;
  readonly salt2: number;
  readonly rings: Ring[] = [];

  constructor(salt1: number, salt2: number) {
    this.salt1 = salt1;
    this.salt2 = salt2;
  }
}

/** Sub-window of `time` for windows of ttlMs / SLICES: ((w - 1) s, w s], so w = ceil(time / s). */
function windowOf(time: number, ttlMs: number): number {
  return Math.ceil((time * SLICES) / ttlMs);
}

/**
 * The first sub-window that meets (time - ttlMs, time]: SLICES - 1 back when `time` ends its
 * window (the one SLICES back then ends at time - ttlMs exactly), else SLICES back.
 */
function firstWindow(window: number, time: number, ttlMs: number): number {
  return window * ttlMs === time * SLICES ? window - SLICES + 1 : window - SLICES;
}

function slotOf(window: number): number {
  return ((window % RING) + RING) % RING;
}

export class BlockingWindows {
  /** Clients whose state is kept exactly. */
  readonly capacity: number;
  private readonly now: () => number;
  private readonly hasher: SketchHasher;
  private readonly options: ReturnType<typeof sketchOptions>;
  private readonly scopes = new Map<string, Scope>();
  private readonly rings: Ring[] = [];
  /** When a block ends, per key and scope. */
  private readonly blocks: LatestTimes;
  /** When the reported window ends, per key and scope. */
  private readonly expiries: LatestTimes;
  private readonly buckets: number;
  private readonly used: Uint8Array;
  private readonly h1s: Int32Array;
  private readonly h2s: Int32Array;
  private readonly modes: Uint8Array;
  /** A certain client's flag: blocked until its next hit after blockedUntil. */
  private readonly blocked: Uint8Array;
  private readonly blockedUntil: Float64Array;
  private readonly expiresAt: Float64Array;
  private readonly lastHit: Float64Array;
  /** The ring whose ttlMs sizes the slot's sub-windows. */
  private readonly ringOf: Int16Array;
  /** Per slot, RING sub-windows: which window, hits, first and last hit time. */
  private readonly windows: Float64Array;
  private readonly counts: Float64Array;
  private readonly firsts: Float64Array;
  private readonly lasts: Float64Array;
  /** A sketch made to check the options, kept for the first ring. */
  private spare: CountMinSketch | null;
  private lastTime = Number.NEGATIVE_INFINITY;
  private lastScopeName = '';
  private lastScope: Scope | null = null;
  /** Set by `count`: the bounds of a slot's hits in the last ttlMs. */
  private upper = 0;
  private lower = 0;

  /** Options checked by the caller (the adapter names them in its own words). */
  constructor(options: BlockingWindowsOptions, capacity: number) {
    this.buckets = Math.ceil(capacity / SLOTS_PER_BUCKET);
    this.capacity = this.buckets * SLOTS_PER_BUCKET;
    this.now = options.now ?? (() => Date.now());
    this.options = sketchOptions(options, true);
    const { width, depth } = resolveDimensions(options);
    // Made now, so that bad sketch options fail here and not at the first hit; the first ring's.
    this.spare = new CountMinSketch(this.options);
    this.hasher = this.spare.hasher;
    this.blocks = new LatestTimes(width, depth);
    this.expiries = new LatestTimes(width, depth);
    const n = this.capacity;
    this.used = new Uint8Array(n);
    this.h1s = new Int32Array(n);
    this.h2s = new Int32Array(n);
    this.modes = new Uint8Array(n);
    this.blocked = new Uint8Array(n);
    this.blockedUntil = new Float64Array(n);
    this.expiresAt = new Float64Array(n);
    this.lastHit = new Float64Array(n);
    this.ringOf = new Int16Array(n);
    this.windows = new Float64Array(n * RING);
    this.counts = new Float64Array(n * RING);
    this.firsts = new Float64Array(n * RING);
    this.lasts = new Float64Array(n * RING);
  }

  /** Bytes of process memory: the table, the max sketches and every ring's sketches. */
  get memoryBytes(): number {
    let sketches = 0;
    for (const ring of this.rings) {
      for (const sketch of ring.sketches) sketches += sketch.memoryBytes;
    }
    return (
      this.capacity * (4 * 8 + 2 * 4 + 3 + 2 + 4 * 8 * RING) +
      this.blocks.memoryBytes +
      this.expiries.memoryBytes +
      sketches
    );
  }

  /**
   * A hit of `key` under `call`'s rule (scope, ttlMs, limit, blockMs, checked by the caller);
   * what it found goes into `call`. RangeError naming ttl for a (scope, ttlMs) pair beyond
   * MAX_RINGS.
   */
  hit(key: Key, call: BlockingCall): void {
    const clock = readClock(this.now);
    // A clock that steps back stands still: sub-windows only move forward.
    const time = Math.max(clock, this.lastTime);
    this.lastTime = time;
    const scope = this.scopeOf(call.scope);
    const ring = this.ringFor(scope, call.ttlMs);
    const hasher = this.hasher;
    hasher.hash(key);
    const h1 = hasher.h1;
    const h2 = hasher.h2;
    const s1 = h1 ^ scope.salt1;
    const s2 = h2 ^ scope.salt2;
    let slot = this.find(s1, s2);
    if (slot < 0) slot = this.take(s1, s2, time);
    if (this.ringOf[slot] !== ring.index) {
      // Sub-windows of another ttlMs: start them again; the backstop has every hit.
      this.becomeUnsure(slot);
      this.ringOf[slot] = ring.index;
      this.windows.fill(Number.NaN, slot * RING, slot * RING + RING);
    }
    // Nothing running for it: the algorithm's next answer is a new key's, unless it still holds
    // a block that has ended, which lets the next hit through (and counts it) where a new key's
    // first hit over a limit below 1 is blocked. So with such a limit, a key that may have been
    // blocked (its blockedUntil is not 0) stays unsure.
    const settled = call.blockMs <= 0 || call.limit >= 1 || this.blockedUntil[slot] === 0;
    if (this.modes[slot] === UNSURE && settled && this.isFresh(slot, ring, h1, h2, time)) {
      this.modes[slot] = CERTAIN;
    }
    for (const each of scope.rings) this.countInRing(each, h1, h2, time);
    if (this.expiresAt[slot] <= time) {
      this.expiresAt[slot] = time + ring.ttlMs;
      this.expiries.raise(s1, s2, time + ring.ttlMs);
    }
    this.lastHit[slot] = time;
    call.time = time;
    call.expiresAt = this.expiresAt[slot];
    if (call.blockMs <= 0) {
      this.unblockingHit(slot, ring, h1, h2, time, call);
      return;
    }
    // A certain client's hits while it is blocked are not counted, as the algorithm's.
    if (this.modes[slot] === UNSURE || this.blocked[slot] === 0) this.addToSlot(slot, ring, time);
    if (this.modes[slot] === UNSURE || !this.certainHit(slot, ring, s1, s2, time, call)) {
      this.unsureHit(slot, ring, h1, h2, s1, s2, time, call);
    }
    call.blockedUntil = this.blockedUntil[slot];
  }

  /**
   * A hit under a rule without a block (blockMs 0): refused while the key's count is at the limit,
   * and then not counted; `blockedUntil` says when its oldest hit leaves the window (the time
   * @nestjs/throttler 6.7 reports), or the hit's time when it is let through. The blocks of other
   * calls do not apply, as in the algorithm.
   */
  private unblockingHit(
    slot: number,
    ring: Ring,
    h1: number,
    h2: number,
    time: number,
    call: BlockingCall,
  ): void {
    let refused: boolean;
    if (this.modes[slot] === CERTAIN) {
      this.count(slot, ring, time);
      if (this.upper >= call.limit && this.lower < call.limit) this.becomeUnsure(slot);
    }
    if (this.modes[slot] === CERTAIN) {
      refused = this.upper >= call.limit;
      if (!refused) this.addToSlot(slot, ring, time);
      call.totalHits = this.upper + 1;
    } else {
      // Every hit counted, refused ones too: the algorithm may have let them through.
      this.addToSlot(slot, ring, time);
      this.count(slot, ring, time);
      const backstop = this.ringCount(ring, h1, h2, time);
      const count = Math.max(backstop, this.upper);
      refused = count > call.limit;
      call.totalHits = count;
    }
    call.blocked = refused;
    call.blockedUntil = refused ? this.oldestHit(slot, ring, time) + ring.ttlMs : time;
  }

  /**
   * The time of the slot's oldest hit in the windows meeting the last ttlMs (the first hit of the
   * oldest window that has one); without one, `expiresAt - ttlMs`, as the algorithm answers then.
   */
  private oldestHit(slot: number, ring: Ring, time: number): number {
    const ttlMs = ring.ttlMs;
    const window = windowOf(time, ttlMs);
    for (let each = firstWindow(window, time, ttlMs); each <= window; each++) {
      const cell = slot * RING + slotOf(each);
      if (this.windows[cell] === each) return this.firsts[cell];
    }
    return this.expiresAt[slot] - ttlMs;
  }

  /**
   * The algorithm's own steps, on the slot that mirrors its state (the hit already added unless
   * blocked). False, without an answer, when the client has become unsure instead.
   */
  private certainHit(
    slot: number,
    ring: Ring,
    s1: number,
    s2: number,
    time: number,
    call: BlockingCall,
  ): boolean {
    this.count(slot, ring, time);
    if (this.upper > call.limit && this.blocked[slot] === 0) {
      if (this.lower <= call.limit) {
        // The coarse windows alone go over: the algorithm may not block here. Unsure from now.
        this.becomeUnsure(slot);
        return false;
      }
      this.blocked[slot] = 1;
      this.blockedUntil[slot] = time + call.blockMs;
      this.blocks.raise(s1, s2, time + call.blockMs);
    }
    if (this.blocked[slot] === 1 && this.blockedUntil[slot] <= time) {
      this.blocked[slot] = 0; // the block has ended: start over at this hit
      this.windows.fill(Number.NaN, slot * RING, slot * RING + RING);
      this.addToSlot(slot, ring, time);
      this.upper = 1;
    }
    call.totalHits = this.upper;
    call.blocked = this.blocked[slot] === 1;
    return true;
  }

  /** From here on every hit is in the slot; a block runs on blockedUntil alone. */
  private becomeUnsure(slot: number): void {
    this.modes[slot] = UNSURE;
    this.blocked[slot] = 0;
  }

  /**
   * Every hit counted (the slot's or the backstop's count, whichever is more), no start-over,
   * every hit over the limit blocks until blockMs after it (the hit already added).
   */
  private unsureHit(
    slot: number,
    ring: Ring,
    h1: number,
    h2: number,
    s1: number,
    s2: number,
    time: number,
    call: BlockingCall,
  ): void {
    this.count(slot, ring, time);
    const backstop = this.ringCount(ring, h1, h2, time);
    const count = Math.max(backstop, this.upper);
    if (count > call.limit && time + call.blockMs > this.blockedUntil[slot]) {
      this.blockedUntil[slot] = time + call.blockMs;
      this.blocks.raise(s1, s2, time + call.blockMs);
    }
    call.totalHits = count;
    call.blocked = this.blockedUntil[slot] > time;
  }

  /**
   * Whether nothing runs for the unsure client in `slot`: no hit counted in its last ttlMs (in
   * its slot or the backstop) and no block.
   */
  private isFresh(slot: number, ring: Ring, h1: number, h2: number, time: number): boolean {
    if (this.blockedUntil[slot] > time) return false;
    this.count(slot, ring, time);
    return this.upper === 0 && this.ringCount(ring, h1, h2, time) === 0;
  }

  /** Sets `upper` and `lower`: bounds of the slot's hits in (time - ttlMs, time]. */
  private count(slot: number, ring: Ring, time: number): void {
    const ttlMs = ring.ttlMs;
    const window = windowOf(time, ttlMs);
    const first = firstWindow(window, time, ttlMs);
    const since = time - ttlMs;
    let upper = 0;
    let lower = 0;
    for (let each = window; each >= first; each--) {
      const cell = slot * RING + slotOf(each);
      if (this.windows[cell] !== each) continue;
      const hits = this.counts[cell];
      // Every window after `first` lies wholly inside; of `first`, what its times prove: all of
      // its hits inside, none, or from its last (inside) to all but its first (outside).
      if (each > first || this.firsts[cell] > since) {
        upper += hits;
        lower += hits;
      } else if (this.lasts[cell] > since) {
        upper += hits - 1;
        lower += 1;
      }
    }
    this.upper = upper;
    this.lower = lower;
  }

  private addToSlot(slot: number, ring: Ring, time: number): void {
    const window = windowOf(time, ring.ttlMs);
    const cell = slot * RING + slotOf(window);
    if (this.windows[cell] !== window) {
      this.windows[cell] = window;
      this.counts[cell] = 0;
      this.firsts[cell] = time;
    }
    this.counts[cell] += 1;
    this.lasts[cell] = time;
  }

  /** The backstop's count of the key hashed to (h1, h2) over the windows meeting the last ttlMs. */
  private ringCount(ring: Ring, h1: number, h2: number, time: number): number {
    const ttlMs = ring.ttlMs;
    const window = windowOf(time, ttlMs);
    const first = firstWindow(window, time, ttlMs);
    let sum = 0;
    for (let each = window; each >= first; each--) {
      const index = slotOf(each);
      if (ring.windows[index] === each) sum += ring.sketches[index].kernel.estimate(h1, h2);
    }
    return sum;
  }

  private countInRing(ring: Ring, h1: number, h2: number, time: number): void {
    const window = windowOf(time, ring.ttlMs);
    const index = slotOf(window);
    if (ring.windows[index] !== window) {
      ring.sketches[index].clear(); // held a window SLICES + 1 back: nobody reads it any more
      ring.windows[index] = window;
    }
    ring.sketches[index].kernel.increment(h1, h2, 1);
  }

  private scopeOf(name: string): Scope {
    if (name === this.lastScopeName && this.lastScope !== null) return this.lastScope;
    let scope = this.scopes.get(name);
    if (scope === undefined) {
      this.hasher.hash(`\u0000scope\u0000${name}`);
      scope = new Scope(this.hasher.h1, this.hasher.h2);
      this.scopes.set(name, scope);
    }
    this.lastScopeName = name;
    this.lastScope = scope;
    return scope;
  }

  private ringFor(scope: Scope, ttlMs: number): Ring {
    const rings = scope.rings;
    for (let i = 0; i < rings.length; i++) if (rings[i].ttlMs === ttlMs) return rings[i];
    if (this.rings.length >= MAX_RINGS) {
      throw rangeError(
        'ttl',
        `one of the ${MAX_RINGS} (scope, ttl) pairs already in use (a new one costs ${RING} sketches)`,
        ttlMs,
      );
    }
    const sketches = Array.from({ length: RING }, () => {
      const spare = this.spare;
      this.spare = null;
      return spare ?? new CountMinSketch(this.options);
    });
    const ring = new Ring(this.rings.length, ttlMs, sketches);
    this.rings.push(ring);
    rings.push(ring);
    return ring;
  }

  /** The slot holding (s1, s2), or -1. */
  private find(s1: number, s2: number): number {
    const base = ((s1 >>> 0) % this.buckets) * SLOTS_PER_BUCKET;
    for (let slot = base; slot < base + SLOTS_PER_BUCKET; slot++) {
      if (this.used[slot] === 1 && this.h1s[slot] === s1 && this.h2s[slot] === s2) return slot;
    }
    return -1;
  }

  /**
   * A slot for (s1, s2): a free one, else the one whose client stopped mattering first (its last
   * hit out of every window, its block over). Its client keeps what the backstop holds; the new
   * one starts unsure, with the backstop's block and window end, until `isFresh` says otherwise.
   */
  private take(s1: number, s2: number, time: number): number {
    const base = ((s1 >>> 0) % this.buckets) * SLOTS_PER_BUCKET;
    let chosen = base;
    let ends = Number.POSITIVE_INFINITY;
    for (let slot = base; slot < base + SLOTS_PER_BUCKET; slot++) {
      if (this.used[slot] === 0) {
        chosen = slot;
        break;
      }
      const ring = this.rings[this.ringOf[slot]];
      const counted = this.lastHit[slot] + ring.ttlMs + ring.ttlMs / SLICES;
      const end = Math.max(counted, this.blockedUntil[slot]);
      if (end < ends) {
        ends = end;
        chosen = slot;
      }
      if (end <= time) break;
    }
    this.used[chosen] = 1;
    this.h1s[chosen] = s1;
    this.h2s[chosen] = s2;
    this.modes[chosen] = UNSURE;
    this.blocked[chosen] = 0;
    this.ringOf[chosen] = -1;
    this.blockedUntil[chosen] = this.blocks.estimate(s1, s2);
    this.expiresAt[chosen] = this.expiries.estimate(s1, s2);
    return chosen;
  }
}
