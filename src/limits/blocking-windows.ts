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
 *   from one to all but one). A block whose lower bound is also over the limit is the
 *   algorithm's own block, and the client stays certain; one the coarse windows alone decided
 *   may not be, and makes the client unsure. When every hit falls on a multiple of
 *   ttlMs / SLICES, the two bounds are equal and the answers are exactly the algorithm's.
 * - Unsure: a client that came back after its slot was taken (with hits still counted or a block
 *   running), or after an uncertain block. Every hit is counted (in its slot and in the backstop,
 *   whichever is more), no start-over, and every hit over the limit blocks until blockMs after it.
 *   Never more lenient than the algorithm: its count is never under the algorithm's, and wherever
 *   the algorithm blocks, the count is over the limit here too. It becomes certain again once
 *   nothing is counted for it in its last ttlMs and no block runs (the algorithm then has nothing
 *   on it either: the next hit counts 1).
 * The backstop: per scope and ttlMs, three Count-Min sketches in rotation (sub-windows of
 * ttlMs / 2: coarser than the table's, since it answers only for unsure clients, which are
 * counted in full already, and three sketches read cost less than five), and a max sketch
 * (LatestTimes, two lanes) of when a block ends and when the reported window ends, so that a
 * client pushed out of the table keeps them. A new client whose key reads 0 there and in the
 * backstop is certain from its first hit; under a load that fills every cell (far more clients
 * per ttlMs than the sketches' width), new clients are unsure, counted as the backstop counts
 * them, within its error bound.
 *
 * Memory: the table (capacity x 217 bytes), the max sketch (width x depth x 16 bytes) and three
 * sketches per (scope, ttlMs) pair, whatever the number of keys. A slot's state is one record
 * (STRIDE numbers side by side), and the table's index (hashes, in use) and each slot's
 * "relevant until" time are arrays apart, so that finding, evicting and updating a client
 * touch few cache lines.
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

/** Sub-windows per ttlMs of a client in the table (bounded further by its hits' times). */
const SLICES = 4;
const RING = SLICES + 1;
/**
 * Sub-windows per ttlMs of the backstop, which answers for unsure clients only: coarser (a hit
 * counted up to ttlMs / 2 longer), so that a hit reads three sketches, not five.
 */
const BACKSTOP_SLICES = 2;
const BACKSTOP_RING = BACKSTOP_SLICES + 1;
/** The lanes of `times`: when a block ends, when the reported window ends. */
const BLOCK = 0;
const EXPIRY = 1;
const SLOTS_PER_BUCKET = 8;
/** The most (scope, ttlMs) pairs: each costs BACKSTOP_RING sketches; a ttl may come from a request. */
const MAX_RINGS = 64;
/** The most clients a table may hold: keeps a configuration typo from allocating gigabytes. */
export const MAX_BLOCKING_CAPACITY = 2 ** 22;
const CERTAIN = 0;
const UNSURE = 1;
/**
 * A slot's fields: CERTAIN or UNSURE; a certain client's blocked flag (blocked until its next
 * hit after BLOCKED_UNTIL, as the algorithm's); when its block ends; when its reported window
 * ends; the ring whose ttlMs sizes its sub-windows; then RING sub-windows of four numbers each
 * (which window, hits, first and last hit time).
 */
const MODE = 0;
const BLOCKED = 1;
const BLOCKED_UNTIL = 2;
const EXPIRES_AT = 3;
const RING_OF = 4;
const WINDOWS = 5;
const WINDOW = 0;
const COUNT = 1;
const FIRST = 2;
const LAST = 3;
const STRIDE = WINDOWS + 4 * RING;

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

/** The backstop's sketches of one (scope, ttlMs): BACKSTOP_RING sub-windows in rotation. */
class Ring {
  readonly index: number;
  readonly ttlMs: number;
  readonly sketches: CountMinSketch[];
  /** The sub-window each sketch holds, NaN for none. */
  readonly windows = new Float64Array(BACKSTOP_RING).fill(Number.NaN);

  constructor(index: number, ttlMs: number, sketches: CountMinSketch[]) {
    this.index = index;
    this.ttlMs = ttlMs;
    this.sketches = sketches;
  }
}

/**
 * Where this hit stands, made once and filled by `hit`: the client's slot (and where its record
 * starts), the ring of its (scope, ttlMs), its hashes (h1, h2 for the backstop; s1, s2 salted
 * by the scope, for the table and the times), the clock.
 */
class Place {
  slot = 0;
  at = 0;
  ring!: Ring;
  h1 = 0;
  h2 = 0;
  s1 = 0;
  s2 = 0;
  time = 0;
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

/** Sub-window of `time` for windows s = ttlMs / slices: ((w - 1) s, w s], so w = ceil(time / s). */
function windowOf(time: number, ttlMs: number, slices: number): number {
  return Math.ceil((time * slices) / ttlMs);
}

/**
 * The first sub-window that meets (time - ttlMs, time]: slices - 1 back when `time` ends its
 * window (the one `slices` back then ends at time - ttlMs exactly), else `slices` back.
 */
function firstWindow(window: number, time: number, ttlMs: number, slices: number): number {
  return window * ttlMs === time * slices ? window - slices + 1 : window - slices;
}

/** Where window `window` lives in a ring of `length`. */
function slotOf(window: number, length: number): number {
  return ((window % length) + length) % length;
}

export class BlockingWindows {
  /** Clients whose state is kept exactly. */
  readonly capacity: number;
  private readonly now: () => number;
  private readonly hasher: SketchHasher;
  private readonly options: ReturnType<typeof sketchOptions>;
  private readonly scopes = new Map<string, Scope>();
  private readonly rings: Ring[] = [];
  /** Per key and scope: when a block ends (lane BLOCK), when the reported window ends (EXPIRY). */
  private readonly times: LatestTimes;
  private readonly buckets: number;
  /** The table's index, apart so that finding a client reads two cache lines. */
  private readonly used: Uint8Array;
  private readonly h1s: Int32Array;
  private readonly h2s: Int32Array;
  /** Until when a slot's client matters (its hits counted, its block): what eviction compares. */
  private readonly relevant: Float64Array;
  /** Each slot's state, STRIDE numbers side by side (the fields at MODE...WINDOWS). */
  private readonly state: Float64Array;
  /** A sketch made to check the options, kept for the first ring. */
  private spare: CountMinSketch | null;
  private lastTime = Number.NEGATIVE_INFINITY;
  private lastScopeName = '';
  private lastScope: Scope | null = null;
  /** Set by `count`: the bounds of a slot's hits in the last ttlMs. */
  private upper = 0;
  private lower = 0;
  /** The backstop's count before this hit, as `isFresh` read it; -1 when it did not. */
  private backstopBefore = -1;
  private readonly place = new Place();

  /** Options checked by the caller (the adapter names them in its own words). */
  constructor(options: BlockingWindowsOptions) {
    this.buckets = Math.ceil((options.capacity ?? 4096) / SLOTS_PER_BUCKET);
    this.capacity = this.buckets * SLOTS_PER_BUCKET;
    this.now = options.now ?? (() => Date.now());
    this.options = sketchOptions(options, true);
    const { width, depth } = resolveDimensions(options);
    // Made now, so that bad sketch options fail here and not at the first hit; the first ring's.
    this.spare = new CountMinSketch(this.options);
    this.hasher = this.spare.hasher;
    this.times = new LatestTimes(width, depth, 2);
    const n = this.capacity;
    this.used = new Uint8Array(n);
    this.h1s = new Int32Array(n);
    this.h2s = new Int32Array(n);
    this.relevant = new Float64Array(n);
    this.state = new Float64Array(n * STRIDE);
  }

  /** Bytes of process memory: the table, the max sketches and every ring's sketches. */
  get memoryBytes(): number {
    let sketches = 0;
    for (const ring of this.rings) {
      for (const sketch of ring.sketches) sketches += sketch.memoryBytes;
    }
    return this.capacity * (1 + 2 * 4 + 8 + 8 * STRIDE) + this.times.memoryBytes + sketches;
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
    this.backstopBefore = -1;
    const scope = this.scopeOf(call.scope);
    const ring = this.ringFor(scope, call.ttlMs);
    const hasher = this.hasher;
    hasher.hash(key);
    const p = this.place;
    p.ring = ring;
    p.time = time;
    p.h1 = hasher.h1;
    p.h2 = hasher.h2;
    p.s1 = p.h1 ^ scope.salt1;
    p.s2 = p.h2 ^ scope.salt2;
    let slot = this.find(p.s1, p.s2);
    if (slot < 0) slot = this.take(p.s1, p.s2, time);
    p.slot = slot;
    const at = slot * STRIDE;
    p.at = at;
    const state = this.state;
    if (state[at + RING_OF] !== ring.index) {
      // Sub-windows of another ttlMs: start them again; the backstop has every hit.
      this.becomeUnsure(at);
      state[at + RING_OF] = ring.index;
      this.clearWindows(at);
    }
    // Nothing running for it: the algorithm's next answer is a new key's, unless it still holds
    // a block that has ended, which lets the next hit through (and counts it) where a new key's
    // first hit over a limit below 1 is blocked. So with such a limit, a key that may have been
    // blocked (its blockedUntil is not 0) stays unsure.
    const settled = call.blockMs <= 0 || call.limit >= 1 || state[at + BLOCKED_UNTIL] === 0;
    if (state[at + MODE] === UNSURE && settled && this.isFresh(p)) state[at + MODE] = CERTAIN;
    for (const each of scope.rings) this.countInRing(each, p.h1, p.h2, time);
    if (state[at + EXPIRES_AT] <= time) {
      state[at + EXPIRES_AT] = time + ring.ttlMs;
      this.times.raise(p.s1, p.s2, time + ring.ttlMs, EXPIRY);
    }
    call.time = time;
    call.expiresAt = state[at + EXPIRES_AT];
    if (call.blockMs <= 0) {
      this.unblockingHit(p, call);
    } else {
      // A certain client's hits while it is blocked are not counted, as the algorithm's.
      const unsure = state[at + MODE] === UNSURE;
      if (unsure || state[at + BLOCKED] === 0) this.addToSlot(p);
      if (unsure || !this.certainHit(p, call)) this.unsureHit(p, call);
      call.blockedUntil = state[at + BLOCKED_UNTIL];
    }
    const counted = time + ring.ttlMs + ring.ttlMs / SLICES;
    this.relevant[slot] = Math.max(counted, state[at + BLOCKED_UNTIL]);
  }

  /**
   * A hit under a rule without a block (blockMs 0): refused while the key's count is at the limit,
   * and then not counted; `blockedUntil` says when its oldest hit leaves the window (the time
   * @nestjs/throttler 6.7 reports), or the hit's time when it is let through. The blocks of other
   * calls do not apply, as in the algorithm.
   */
  private unblockingHit(p: Place, call: BlockingCall): void {
    const state = this.state;
    let refused: boolean;
    if (state[p.at + MODE] === CERTAIN) {
      this.count(p);
      if (this.upper >= call.limit && this.lower < call.limit) this.becomeUnsure(p.at);
    }
    if (state[p.at + MODE] === CERTAIN) {
      refused = this.upper >= call.limit;
      if (!refused) this.addToSlot(p);
      call.totalHits = this.upper + 1;
    } else {
      // Every hit counted, refused ones too: the algorithm may have let them through.
      this.addToSlot(p);
      this.count(p);
      const count = Math.max(this.backstopAfter(p), this.upper);
      refused = count > call.limit;
      call.totalHits = count;
    }
    call.blocked = refused;
    call.blockedUntil = refused ? this.oldestHit(p) + p.ring.ttlMs : p.time;
  }

  /**
   * The time of the slot's oldest hit in the last ttlMs: the first hit of the oldest window that
   * has one inside (of a window only partly inside, its last hit, which is never sooner); without
   * one, `expiresAt - ttlMs`, as the algorithm answers then.
   */
  private oldestHit(p: Place): number {
    const state = this.state;
    const { ttlMs } = p.ring;
    const since = p.time - ttlMs;
    const window = windowOf(p.time, ttlMs, SLICES);
    for (let each = firstWindow(window, p.time, ttlMs, SLICES); each <= window; each++) {
      const cell = p.at + WINDOWS + 4 * slotOf(each, RING);
      if (state[cell + WINDOW] !== each || state[cell + LAST] <= since) continue;
      return state[cell + FIRST] > since ? state[cell + FIRST] : state[cell + LAST];
    }
    return state[p.at + EXPIRES_AT] - ttlMs;
  }

  /**
   * The algorithm's own steps, on the slot that mirrors its state (the hit already added unless
   * blocked). False, without an answer, when the client has become unsure instead.
   */
  private certainHit(p: Place, call: BlockingCall): boolean {
    const state = this.state;
    const at = p.at;
    this.count(p);
    if (this.upper > call.limit && state[at + BLOCKED] === 0) {
      if (this.lower <= call.limit) {
        // The coarse windows alone go over: the algorithm may not block here. Unsure from now.
        this.becomeUnsure(at);
        return false;
      }
      state[at + BLOCKED] = 1;
      state[at + BLOCKED_UNTIL] = p.time + call.blockMs;
      this.times.raise(p.s1, p.s2, p.time + call.blockMs, BLOCK);
    }
    if (state[at + BLOCKED] === 1 && state[at + BLOCKED_UNTIL] <= p.time) {
      state[at + BLOCKED] = 0; // the block has ended: start over at this hit
      this.clearWindows(at);
      this.addToSlot(p);
      this.upper = 1;
    }
    call.totalHits = this.upper;
    call.blocked = state[at + BLOCKED] === 1;
    return true;
  }

  /** Empties the sub-windows of the slot whose record starts at `at`. */
  private clearWindows(at: number): void {
    const base = at + WINDOWS;
    for (let each = 0; each < RING; each++) this.state[base + 4 * each + WINDOW] = Number.NaN;
  }

  /** From here on every hit is in the slot; a block runs on blockedUntil alone. */
  private becomeUnsure(at: number): void {
    this.state[at + MODE] = UNSURE;
    this.state[at + BLOCKED] = 0;
  }

  /**
   * Every hit counted (the slot's or the backstop's count, whichever is more), no start-over,
   * every hit over the limit blocks until blockMs after it (the hit already added).
   */
  private unsureHit(p: Place, call: BlockingCall): void {
    const state = this.state;
    this.count(p);
    const count = Math.max(this.backstopAfter(p), this.upper);
    const until = p.time + call.blockMs;
    if (count > call.limit && until > state[p.at + BLOCKED_UNTIL]) {
      state[p.at + BLOCKED_UNTIL] = until;
      this.times.raise(p.s1, p.s2, until, BLOCK);
    }
    call.totalHits = count;
    call.blocked = state[p.at + BLOCKED_UNTIL] > p.time;
  }

  /**
   * Whether nothing runs for the unsure client: no hit counted in its last ttlMs (in its slot or
   * the backstop) and no block.
   */
  private isFresh(p: Place): boolean {
    if (this.state[p.at + BLOCKED_UNTIL] > p.time) return false;
    this.count(p);
    if (this.upper !== 0) return false;
    this.backstopBefore = this.ringCount(p.ring, p.h1, p.h2, p.time);
    return this.backstopBefore === 0;
  }

  /**
   * The backstop's count once this hit is in it: what `isFresh` read before, plus the hit (an
   * increment adds exactly 1 to the key's estimate, plain or conservative), else read now.
   */
  private backstopAfter(p: Place): number {
    const before = this.backstopBefore;
    return before >= 0 ? before + 1 : this.ringCount(p.ring, p.h1, p.h2, p.time);
  }

  /** Sets `upper` and `lower`: bounds of the slot's hits in (time - ttlMs, time]. */
  private count(p: Place): void {
    const state = this.state;
    const { ttlMs } = p.ring;
    const time = p.time;
    const window = windowOf(time, ttlMs, SLICES);
    const first = firstWindow(window, time, ttlMs, SLICES);
    const since = time - ttlMs;
    let upper = 0;
    let lower = 0;
    for (let each = window; each >= first; each--) {
      const cell = p.at + WINDOWS + 4 * slotOf(each, RING);
      if (state[cell + WINDOW] !== each) continue;
      const hits = state[cell + COUNT];
      // Every window after `first` lies wholly inside; of `first`, what its times prove: all of
      // its hits inside, none, or from its last (inside) to all but its first (outside).
      if (each > first || state[cell + FIRST] > since) {
        upper += hits;
        lower += hits;
      } else if (state[cell + LAST] > since) {
        upper += hits - 1;
        lower += 1;
      }
    }
    this.upper = upper;
    this.lower = lower;
  }

  /** Counts the hit in the slot's sub-window of its time. */
  private addToSlot(p: Place): void {
    const state = this.state;
    const window = windowOf(p.time, p.ring.ttlMs, SLICES);
    const cell = p.at + WINDOWS + 4 * slotOf(window, RING);
    if (state[cell + WINDOW] !== window) {
      state[cell + WINDOW] = window;
      state[cell + COUNT] = 0;
      state[cell + FIRST] = p.time;
    }
    state[cell + COUNT] += 1;
    state[cell + LAST] = p.time;
  }

  /** The backstop's count of the key hashed to (h1, h2) over the windows meeting the last ttlMs. */
  private ringCount(ring: Ring, h1: number, h2: number, time: number): number {
    const ttlMs = ring.ttlMs;
    const window = windowOf(time, ttlMs, BACKSTOP_SLICES);
    const first = firstWindow(window, time, ttlMs, BACKSTOP_SLICES);
    let sum = 0;
    for (let each = window; each >= first; each--) {
      const index = slotOf(each, BACKSTOP_RING);
      if (ring.windows[index] === each) sum += ring.sketches[index].kernel.estimate(h1, h2);
    }
    return sum;
  }

  private countInRing(ring: Ring, h1: number, h2: number, time: number): void {
    const window = windowOf(time, ring.ttlMs, BACKSTOP_SLICES);
    const index = slotOf(window, BACKSTOP_RING);
    if (ring.windows[index] !== window) {
      ring.sketches[index].clear(); // held a window a ring back: nobody reads it any more
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
        `one of the ${MAX_RINGS} (scope, ttl) pairs already in use (a new one costs ${BACKSTOP_RING} sketches)`,
        ttlMs,
      );
    }
    const sketches = Array.from({ length: BACKSTOP_RING }, () => {
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
      const end = this.relevant[slot];
      if (end < ends) {
        ends = end;
        chosen = slot;
      }
      if (end <= time) break;
    }
    this.used[chosen] = 1;
    this.h1s[chosen] = s1;
    this.h2s[chosen] = s2;
    this.state[chosen * STRIDE + MODE] = UNSURE;
    this.state[chosen * STRIDE + BLOCKED] = 0;
    this.state[chosen * STRIDE + RING_OF] = -1;
    this.state[chosen * STRIDE + BLOCKED_UNTIL] = this.times.estimate(s1, s2, BLOCK);
    this.state[chosen * STRIDE + EXPIRES_AT] = this.times.estimate(s1, s2, EXPIRY);
    return chosen;
  }
}
