/**
 * Heavy hitters: the sketch as a first-stage filter in front of an exact table (the two-stage
 * design Cloudflare describes for finding top talkers at line rate).
 *
 * An event of a key the exact table tracks goes to its exact count only; any other event goes
 * to the sketch. A key enters the table once its estimate (with this event) reaches `threshold`
 * and, when the table is full, exceeds the smallest count in it; the entering event starts its
 * exact count. The evicted key gives its exact count back to the sketch. So each event is in
 * exactly one place, the sketch or one exact count, and the sketch holds every event of every
 * key it does not track. This is the Augmented Sketch (Roy, Khan, Alonso, "Augmented Sketch:
 * Faster and More Accurate Stream Processing", SIGMOD 2016): the heavy keys, most of the
 * events, cost a table lookup and never touch the sketch's cells, which makes counting faster,
 * keeps them from inflating the estimates of the keys they collide with, and (in threads)
 * keeps the hottest cells from bouncing between cores. Memory is the sketch plus `capacity`
 * entries, whatever the number of distinct keys. The sketch's total still counts every event.
 *
 * Bounds. When a key enters with estimate e after an event of `by`, its count before that event
 * was at most e - by (the sketch never underestimates what it holds) and at least 0.
 * Afterwards we count exactly, so with x counted since entering (including that event):
 *   lowerBound = x <= true count <= base + x, base = e - by,
 * and the sketch's current estimate + x is an upper bound too (the sketch holds the key's
 * events from before it entered, given back on every eviction); `upperBound` is the smaller.
 * With threshold 1, until the table first turns a key away or evicts one, every key this part
 * saw entered on its first event (any key may enter while there is room), so a key entering
 * then was never counted before: base = 0 and the key is exact, however crowded the sketch.
 * So when every key fits in the table, every count is exact.
 * `count`, the ranking, is the upper bound (as in Space-Saving, Metwally et al., ICDT 2005):
 * over by at most the sketch's error at the time of entry, which is small because heavy keys
 * enter early.
 *
 * Threads. With `shared: true` the sketch is in shared memory: `HeavyHitters.attach(handle)`
 * in each worker gives a part with the same sketch and a table of its own. Every event is
 * counted by one part, in the shared sketch or (once the key is tracked there) in that part's
 * table, so exact counts of different parts are of different events and add up without
 * counting anything twice. `combine(part.table())` brings a part's table into this one:
 * lowerBound is the sum of the parts' exact counts; each part's (base + exact) bounds the
 * events it saw (its base bounds those it saw before the key entered: the shared estimate bounds
 * every part's, and 0 is exact when the part cannot have seen it), so their sum bounds the key
 * when every part tracked it; upperBound is the smaller of that and the shared sketch's
 * estimate + the parts' exact counts (the sketch holds every event of the key that no part
 * counted exactly), or the latter alone when some part did not track the key. A part's own
 * top(), before it combines the others, bounds what that part counted.
 */
import { getRandomValues } from 'node:crypto';
import { checkOptionNames, integerIn, rangeError, typeError } from '../errors.js';
import { AddressKey, revivedAddress } from '../hash/address-key.js';
import { checkKey, type Key } from '../hash/key-hasher.js';
import { Aging, type AgingHandle, SCALE_ONE, scaleOf } from '../sketch/aging.js';
import { CountMinSketch } from '../sketch/count-min.js';
import { SATURATED } from '../sketch/counters.js';
import { SharedCounters } from '../sketch/shared-counters.js';
import {
  type CountMinOptions,
  checkAmount,
  type Keys,
  SKETCH_OPTION_NAMES,
  type SketchHandle,
} from '../sketch/sketch-options.js';
import { ExactTable, entryId } from './exact-table.js';
import { compareKeys } from './key-order.js';

/** Options of `new HeavyHitters`: k, the table's size and threshold, and the sketch's. */
export interface HeavyHittersOptions extends CountMinOptions {
  /** How many keys `top()` reports by default. */
  k: number;
  /** Keys the exact table holds. Default 4 * k. At least k. */
  capacity?: number;
  /**
   * The estimated count (in units of `by`) a key must reach to enter the exact table.
   * Default 1: any key may enter while the table has room; once it is full, only a key whose
   * estimate exceeds the smallest tracked count. Raise it to keep cold keys out altogether.
   */
  threshold?: number;
}

/** One of the top keys, from `top()`, with bounds on its true count. */
export interface HeavyHitter {
  /** The key, as counted (bytes keys as a copy). */
  key: Key;
  /** What the ranking uses: the upper bound. */
  count: number;
  /** The true count is at least this. */
  lowerBound: number;
  /** The true count is at most this. */
  upperBound: number;
}

/** What a worker needs to `attach` a part of shared heavy hitters; structured-cloneable. */
export interface HeavyHittersHandle {
  /** The handle of the shared sketch every part counts into. */
  sketch: SketchHandle;
  /** How many keys `top()` reports by default. */
  k: number;
  /** Keys each part's exact table holds. */
  capacity: number;
  /** Estimate a key must reach to enter a part's exact table. */
  threshold: number;
  /** The shared half-life, when the heavy hitters age. */
  aging?: AgingHandle;
}

/** One part's exact table, from `table()`, for `combine`; structured-cloneable. */
export interface HeavyHittersTable {
  /** The shared sketch the part counted into ('' for a part with a sketch of its own). */
  sketchId: string;
  /**
   * The bytes (`toBytes`) of the part's own sketch, when it has one (not shared): `combine`
   * merges it into the combining part's sketch, which then holds what both sketches held.
   */
  sketch?: Uint8Array;
  /** The part it comes from: combining one part twice would count its events twice. */
  part: string;
  /** The amounts the part counted, all keys together; a part that counted nothing is no part. */
  counted: number;
  /** The sketch's clears when the table was taken: a table from before a clear is refused. */
  clears: number;
  /** Halvings the table's counts had when it was taken (aging); later ones apply on combine. */
  halvings?: number;
  /**
   * Every key the part counted is in `entries` (threshold 1 and nothing evicted yet), so a key
   * missing from them was never counted by the part.
   */
  complete: boolean;
  /** The tracked keys and their counts. */
  entries: {
    /** The key. */
    key: Key;
    /** At most what the key counted before it entered the table. */
    base: number;
    /** What the key counted since it entered. */
    exact: number;
  }[];
}

const OPTION_NAMES: readonly string[] = ['k', 'capacity', 'threshold', ...SKETCH_OPTION_NAMES];

/** Most entries a table may hold: keeps a configuration typo from allocating gigabytes. */
const MAX_CAPACITY = 2 ** 24;

/** A key's sums over the parts that track it. */
interface Combined {
  key: Key;
  exact: number;
  upper: number;
  /** How many of those parts' tables are not complete. */
  incomplete: number;
}

/** A private copy (Buffer#slice would return a view into the caller's memory). */
function copyBytes(bytes: Uint8Array, start: number, end: number): Uint8Array {
  return new Uint8Array(bytes.subarray(start, end));
}

/** Keys of combined tables are stored, and returned, as copies when they are bytes. */
function copyKey(key: Key): Key {
  return key instanceof Uint8Array ? copyBytes(key, 0, key.length) : key;
}

/**
 * The top keys of a stream with bounds on their counts, in fixed memory: a Count-Min sketch
 * in front of an exact table of `capacity` keys (an Augmented Sketch). `shared: true` lets
 * worker_threads count into one sketch, each with a table of its own (`attach`, `table`,
 * `combine`). TypeError or RangeError naming the option for bad options.
 */
export class HeavyHitters {
  /** How many keys `top()` reports by default. */
  readonly k: number;
  /** Keys the exact table holds. */
  readonly capacity: number;
  /** Estimate a key must reach to enter the exact table. */
  readonly threshold: number;
  /**
   * The first stage: every event of a key the table does not track (a tracked key's estimate
   * leaves out what the table counted); its total counts every event.
   */
  readonly sketch: CountMinSketch;
  private readonly exactTable: ExactTable;
  /** This part's name in the tables it exports. */
  private readonly part = Buffer.from(getRandomValues(new Uint8Array(8))).toString('hex');
  /** Tables of other parts, from `combine`. */
  private readonly combined: HeavyHittersTable[] = [];
  /** The amounts this part counted (the sketch's total also holds other parts'). */
  private counted = 0;
  /** Whether a key this part counted was turned away or evicted (see `complete`). */
  private dropped = false;
  /** The sketch's clears this part's table and combined tables belong to (see `sync`). */
  private clearsSeen: number;
  /** The half-life, or null. */
  private readonly aging: Aging | null;
  /** The halvings (by any part) this part's tables were scaled for (see `sync`). */
  private halvingsSeen = 0;

  /**
   * `sketch` and `aging` are for `attach`: the shared sketch to use instead of a new one, and
   * its shared half-life. @internal
   */
  constructor(options: HeavyHittersOptions, sketch?: CountMinSketch, aging?: AgingHandle) {
    if (options === null || typeof options !== 'object') {
      throw typeError('options', 'an object with k', options);
    }
    checkOptionNames('options', options, OPTION_NAMES);
    this.k = integerIn('k', options.k, 1, MAX_CAPACITY);
    this.capacity =
      options.capacity === undefined
        ? Math.min(4 * this.k, MAX_CAPACITY)
        : integerIn('capacity', options.capacity, this.k, MAX_CAPACITY);
    this.threshold =
      options.threshold === undefined ? 1 : integerIn('threshold', options.threshold, 1, SATURATED);
    // Conservative update by default: heavy hitters never decrement, and tighter estimates
    // mean fewer cold keys pass the filter and smaller bounds for those that do.
    const {
      k: _k,
      capacity: _capacity,
      threshold: _threshold,
      halfLife,
      halfLifeMs,
      now,
      ...sketchOptions
    } = options;
    this.sketch =
      sketch ??
      new CountMinSketch({ ...sketchOptions, conservative: options.conservative ?? true });
    // The heavy hitters age, not their sketch alone: a halving scales the tables with it.
    this.aging =
      aging !== undefined
        ? Aging.attach(aging, now)
        : Aging.from({ halfLife, halfLifeMs, now }, this.sketch.shared);
    this.halvingsSeen = this.aging === null ? 0 : this.aging.halvings;
    this.exactTable = new ExactTable(this.capacity);
    this.clearsSeen = this.sketch.counters.clears;
  }

  /**
   * Forgets what this part holds beside the sketch when the sketch was cleared since (by any
   * part: `clear` on a shared sketch clears it for all), so that no table keeps counts the
   * sketch no longer has. Called before anything reads or adds to the tables.
   */
  private sync(): void {
    const aging = this.aging;
    if (aging !== null && aging.halvings !== this.halvingsSeen) {
      // Halvings applied to the sketch (by this part or another): the tables follow.
      const halvings = (aging.halvings - this.halvingsSeen) | 0;
      this.halvingsSeen = aging.halvings;
      this.scaleTables(halvings > 20 ? 0 : SCALE_ONE >> halvings);
    }
    const clears = this.sketch.counters.clears;
    if (clears === this.clearsSeen) return;
    this.exactTable.clear();
    this.combined.length = 0;
    this.counted = 0;
    this.dropped = false;
    this.clearsSeen = clears;
  }

  /** A part of the heavy hitters `handle` came from, in this thread: same sketch, own table. */
  static attach(handle: HeavyHittersHandle, options: { now?: () => number } = {}): HeavyHitters {
    if (handle === null || typeof handle !== 'object') {
      throw typeError('handle', "a shared HeavyHitters' handle", handle);
    }
    if (options === null || typeof options !== 'object') {
      throw typeError('options', 'an object', options);
    }
    checkOptionNames('options', options, ['now']);
    const { k, capacity, threshold, aging } = handle;
    const now = aging?.halfLifeMs === undefined ? {} : { now: options.now };
    const sketch = CountMinSketch.attach(handle.sketch);
    return new HeavyHitters({ k, capacity, threshold, ...now }, sketch, aging);
  }

  /** What a worker needs to `attach` a part. TypeError unless created with `shared: true`. */
  get handle(): HeavyHittersHandle {
    const aging = this.aging?.handle;
    return {
      sketch: this.sketch.handle,
      k: this.k,
      capacity: this.capacity,
      threshold: this.threshold,
      ...(aging === undefined ? {} : { aging }),
    };
  }

  /**
   * This part's exact table (not the tables combined into it), to `combine` elsewhere: a part
   * of a shared sketch names it; a part with a sketch of its own brings the sketch's bytes.
   */
  table(): HeavyHittersTable {
    const counters = this.sketch.counters;
    this.sync();
    if (this.combined.length > 0) {
      // Its table holds only its own entries, and the exact counts of the tables combined here
      // are in no sketch (tracked keys skip it): passed on, they would be lost.
      throw new RangeError(
        'table() of a part that combined other tables would lose their exact counts: ' +
          'combine every part into one',
      );
    }
    const table = this.exactTable;
    const entries: HeavyHittersTable['entries'] = [];
    for (let i = 0; i < table.size; i++) {
      entries.push({ key: table.key(i), base: table.base(i), exact: table.exact(i) });
    }
    const own = counters instanceof SharedCounters ? {} : { sketch: this.sketch.toBytes() };
    return {
      sketchId: counters instanceof SharedCounters ? counters.id : '',
      ...own,
      part: this.part,
      counted: this.counted,
      complete: this.complete(),
      clears: this.clearsSeen,
      halvings: this.halvingsSeen,
      entries,
    };
  }

  /**
   * Adds another part's table (from `table()` in a thread attached to the same shared sketch,
   * or of heavy hitters with a sketch of their own, made with the same secret and shape, whose
   * sketch is then merged into this one), so that `top()` reports the keys of all parts.
   * RangeError for a table of another sketch or of a part already counted here (this one
   * included); TypeError for one that is malformed.
   */
  combine(table: HeavyHittersTable): this {
    if (table === null || typeof table !== 'object' || !Array.isArray(table.entries)) {
      throw typeError('table', "a HeavyHitters part's table()", table);
    }
    // A part with a sketch of its own brings its sketch; a part of a shared sketch, its id.
    const ownSketch = table.sketch !== undefined ? this.partSketch(table.sketch) : undefined;
    if (ownSketch === undefined && table.sketchId !== this.sketchId()) {
      throw new RangeError('table comes from a part of another sketch');
    }
    this.sync();
    if (ownSketch === undefined && table.clears !== this.clearsSeen) {
      throw new RangeError(
        'table was taken before the sketch was cleared: its counts are no longer in the sketch',
      );
    }
    if (table.part === this.part || this.combined.some((other) => other.part === table.part)) {
      throw new RangeError('table is of a part already counted here: it would count twice');
    }
    if (table.entries.length > MAX_CAPACITY) {
      throw rangeError('table.entries', `at most ${MAX_CAPACITY} entries`, table.entries);
    }
    const entries = table.entries.map((entry, i) => {
      const name = `table.entries[${i}]`;
      if (entry === null || typeof entry !== 'object') throw typeError(name, 'an entry', entry);
      return {
        // A table sent to another thread carries an AddressKey as its structured clone.
        key: copyKey(checkKey(`${name}.key`, revivedAddress(entry.key))),
        base: integerIn(`${name}.base`, entry.base, 0, Number.MAX_SAFE_INTEGER),
        exact: integerIn(`${name}.exact`, entry.exact, 0, Number.MAX_SAFE_INTEGER),
      };
    });
    const counted = integerIn('table.counted', table.counted, 0, Number.MAX_SAFE_INTEGER);
    if (typeof table.complete !== 'boolean') {
      throw typeError('table.complete', 'a boolean', table.complete);
    }
    const { sketchId, part, complete } = table;
    // A table of a part of this shared sketch taken before halvings this part has seen since:
    // its counts were not halved with the sketch, so they are here.
    let scale = SCALE_ONE;
    if (ownSketch === undefined && this.aging !== null) {
      const halvings = integerIn('table.halvings', table.halvings, 0, 2 ** 32);
      const behind = (this.halvingsSeen - halvings) | 0;
      if (behind < 0) throw new RangeError('table.halvings is ahead of the shared sketch');
      scale = behind > 20 ? 0 : SCALE_ONE >> behind;
    }
    if (scale !== SCALE_ONE) {
      for (const entry of entries) {
        entry.exact = Math.floor((entry.exact * scale) / SCALE_ONE);
        entry.base = Math.floor((entry.base * scale) / SCALE_ONE);
      }
    }
    // Last, once everything is validated: nothing changes for a table that is refused.
    if (ownSketch !== undefined) this.sketch.merge(ownSketch);
    this.combined.push({ sketchId, part, counted, complete, clears: this.clearsSeen, entries });
    return this;
  }

  /**
   * The sketch of a part that counted into one of its own, read from its bytes (checked
   * against this sketch's secret; merge checks dimensions and rule).
   */
  private partSketch(bytes: unknown): CountMinSketch {
    if (!(bytes instanceof Uint8Array)) throw typeError('table.sketch', 'a Uint8Array', bytes);
    const sketch = CountMinSketch.fromBytes(bytes, { secret: this.sketch.secret, engine: 'js' });
    if (
      sketch.width !== this.sketch.width ||
      sketch.depth !== this.sketch.depth ||
      sketch.conservative !== this.sketch.conservative
    ) {
      throw new RangeError('table.sketch has other dimensions or another rule than this sketch');
    }
    return sketch;
  }

  /**
   * Whether this part's own table is one of the parts `top()` combines: when it counted
   * something, or when it is the only one (then its bounds are the one-part bounds).
   */
  private ownTableCounts(): boolean {
    return this.counted > 0 || this.combined.length === 0;
  }

  /**
   * Whether every key this part counted is in its table, counted exactly since its first event:
   * with threshold 1 every key enters on its first event while there is room, so this holds
   * until the table first turns a key away or evicts one.
   */
  private complete(): boolean {
    return this.threshold === 1 && !this.dropped;
  }

  private sketchId(): string {
    const counters = this.sketch.counters;
    if (!(counters instanceof SharedCounters)) {
      throw new TypeError(
        'tables combine only over a shared sketch: create the HeavyHitters with shared: true',
      );
    }
    return counters.id;
  }

  /** Counts `by` (default 1) more of `key`. */
  add(key: Key, by = 1): void {
    // Validate everything before touching any state: a rejected call must change nothing.
    checkAmount(by);
    const sketch = this.sketch;
    const hasher = sketch.hasher;
    hasher.hash(key); // throws on a bad key; the hasher's scratch is not observable
    if (this.aging !== null) this.age(by);
    const h1 = hasher.h1;
    const h2 = hasher.h2;
    this.sync();
    const id = entryId(h1);
    const table = this.exactTable;
    const slot = table.find(id, key);
    if (slot >= 0) {
      // Tracked: counted exactly, and in the sketch's total only (see the top comment).
      table.bump(slot, by);
      sketch.kernel.addTotal(by);
    } else {
      const base = this.admitOrCount(h1, h2, by, key instanceof Uint8Array ? key.length : 0);
      if (base >= 0) table.insert(id, key, base, by);
    }
    this.counted += by;
  }

  /**
   * The event of a key the table does not track. If the key enters (its estimate with this
   * event, as both update rules would make it: the least cell + by, saturating), returns the
   * bound on its count before the event, and the table has room for it (and `bytes` more
   * bytes of key): the smallest entry evicted, its exact count given back to the sketch. Else
   * the event goes to the sketch and this returns -1. An event goes either to the sketch or,
   * when it lets its key enter, to the key's exact count, never to both.
   */
  private admitOrCount(h1: number, h2: number, by: number, bytes: number): number {
    const sketch = this.sketch;
    const before = sketch.kernel.estimate(h1, h2);
    const estimate = before >= SATURATED - by ? SATURATED : before + by;
    if (!this.admits(estimate)) {
      sketch.kernel.increment(h1, h2, by);
      if (by > 0) this.dropped = true; // counted, and not in the table
      return -1;
    }
    const table = this.exactTable;
    // First, while nothing has changed: room for the key's bytes can fail (an arena past 4 GiB).
    if (bytes > 0) table.reserveBytes(bytes);
    // 0 when the key cannot have been counted here before (the table is complete); else what
    // the sketch held before the event, or, saturated ("at least"), the total, which bounds
    // every key. Computed before the eviction below, which drops a key.
    const base = this.complete() ? 0 : before < SATURATED ? before : sketch.total;
    if (table.size === this.capacity) {
      this.dropped = true;
      this.evictSmallest();
    }
    sketch.kernel.addTotal(by);
    return base;
  }

  /** Counts one more of each key of `keys`, in order: `add(key)` for each, all validated first. */
  addMany(keys: Keys): void {
    if (keys instanceof Int32Array || keys instanceof Uint32Array) {
      for (let i = 0; i < keys.length; i++) this.add(keys[i]);
      return;
    }
    if (!Array.isArray(keys)) {
      throw typeError('keys', 'an Int32Array, a Uint32Array or an array of keys', keys);
    }
    for (let i = 0; i < keys.length; i++) checkKey(`keys[${i}]`, keys[i]);
    for (const key of keys) this.add(key);
  }

  /**
   * Counts the key made of `bytes[start..end)` without copying it unless it enters the table:
   * the path `hotcount top` uses for lines read into a large buffer. `by` is not validated.
   * @internal
   */
  addBytes(bytes: Uint8Array, start: number, end: number, by: number): void {
    const hasher = this.sketch.hasher;
    hasher.hashBytes(bytes, start, end);
    this.addHashedBytes(bytes, start, end, hasher.h1, hasher.h2, by);
  }

  /**
   * `addBytes` of a key already hashed to (h1, h2) by a hasher keyed as this sketch (the CLI's
   * chunk hasher). `by` is not validated. @internal
   */
  addHashedBytes(
    bytes: Uint8Array,
    start: number,
    end: number,
    h1: number,
    h2: number,
    by: number,
  ): void {
    this.sync();
    const id = entryId(h1);
    const table = this.exactTable;
    const slot = table.findBytes(id, bytes, start, end);
    if (slot >= 0) {
      table.bump(slot, by);
      this.sketch.kernel.addTotal(by);
    } else {
      const base = this.admitOrCount(h1, h2, by, end - start);
      if (base >= 0) table.insertBytes(id, bytes, start, end, base, by);
    }
    this.counted += by;
  }

  /**
   * Before a key enters the full table: the entry about to be evicted gives its exact count
   * back to the sketch, which did not get it while the key was tracked, so that the sketch
   * bounds every event of every key it does not track again.
   */
  private evictSmallest(): void {
    const table = this.exactTable;
    const hasher = this.sketch.hasher;
    table.hashKey(0, hasher);
    this.sketch.kernel.incrementCells(hasher.h1, hasher.h2, table.exact(0));
  }

  private admits(estimate: number): boolean {
    if (estimate < this.threshold) return false;
    const table = this.exactTable;
    return table.size < table.capacity || estimate > table.smallestUpper();
  }

  /**
   * The `n` (default k) heaviest tracked keys of every part combined: by count descending, then
   * lowerBound descending, then the key's bytes ascending (key-order.ts), as `sort` would.
   */
  top(n: number = this.k): HeavyHitter[] {
    integerIn('n', n, 0, MAX_CAPACITY);
    if (this.aging !== null) this.age(0);
    this.sync();
    // The parts that may have counted a key they do not track: a key's sum over the parts is
    // a bound only if every one of them tracks it (a complete part that does not never saw it).
    let incompleteParts = this.ownTableCounts() && !this.complete() ? 1 : 0;
    for (const table of this.combined) if (table.counted > 0 && !table.complete) incompleteParts++;
    const rows: HeavyHitter[] = [];
    if (this.combined.length === 0) {
      const table = this.exactTable;
      for (let i = 0; i < table.size; i++) {
        rows.push(this.row(table.key(i), table.exact(i), table.upper(i), true));
      }
    } else {
      for (const { key, exact, upper, incomplete } of this.combinedEntries()) {
        rows.push(this.row(key, exact, upper, incomplete === incompleteParts));
      }
    }
    // Ties broken by the key, so that the list never depends on the order keys were met in.
    rows.sort(
      (a, b) => b.count - a.count || b.lowerBound - a.lowerBound || compareKeys(a.key, b.key),
    );
    return rows.slice(0, n);
  }

  /**
   * The row of `key` (the caller's to give away): `exact` and `partsUpper` summed over the
   * parts that track it, `bounded` when no other part can have counted it.
   */
  private row(key: Key, exact: number, partsUpper: number, bounded: boolean): HeavyHitter {
    // The sketch holds every event of the key but those counted exactly while tracked (each
    // part's `exact`, which never reached the sketch's cells): estimate + exact bounds them all.
    const estimate = this.sketch.estimate(key);
    // The parts' sums bound nothing when some part may have counted the key without tracking it.
    const fromParts = bounded ? partsUpper : Number.POSITIVE_INFINITY;
    // A saturated estimate reads "at least 2^31 - 1": then the total, which counts every event
    // (tracked ones included), bounds the key.
    const fromSketch = estimate < SATURATED ? estimate + exact : this.sketch.total;
    const upper = Math.min(fromParts, fromSketch);
    return { key, count: upper, lowerBound: exact, upperBound: upper };
  }

  /**
   * Own entries, summed key by key with the entries of combined tables, each with a key of its
   * own. Parts that counted nothing are left out: their entries count 0 exactly and they saw no
   * event to bound.
   */
  private combinedEntries(): Combined[] {
    const byValue = new Map<Key, Combined>();
    // Keys compared by content: bytes by their bytes, addresses by their text (one per key).
    const byBytes = new Map<string, Combined>();
    /** `fresh`: `key` is a copy of its own, to give away (own keys are). */
    const add = (key: Key, exact: number, upper: number, fresh: boolean, complete: boolean) => {
      const bytes =
        key instanceof Uint8Array
          ? `b${Buffer.from(key).toString('latin1')}`
          : key instanceof AddressKey
            ? `a${key}`
            : undefined;
      const found = bytes === undefined ? byValue.get(key) : byBytes.get(bytes);
      if (found !== undefined) {
        found.exact += exact;
        found.upper += upper;
        if (!complete) found.incomplete++;
        return;
      }
      const incomplete = complete ? 0 : 1;
      const entry = { key: fresh ? key : copyKey(key), exact, upper, incomplete };
      if (bytes === undefined) byValue.set(key, entry);
      else byBytes.set(bytes, entry);
    };
    const table = this.exactTable;
    if (this.ownTableCounts()) {
      const complete = this.complete();
      for (let i = 0; i < table.size; i++) {
        add(table.key(i), table.exact(i), table.upper(i), true, complete);
      }
    }
    for (const other of this.combined) {
      if (other.counted === 0) continue;
      for (const entry of other.entries) {
        add(entry.key, entry.exact, entry.base + entry.exact, false, other.complete);
      }
    }
    return [...byValue.values(), ...byBytes.values()];
  }

  /**
   * Multiplies every count by `factor` (default 0.5): the sketch's cells and the exact table's
   * counts and bounds (each rounded down), and the tables combined here. A key's count is then
   * its two parts, the events in the sketch and those counted exactly, each decayed the same
   * way, and lowerBound <= that <= upperBound still. RangeError for a factor outside [0, 1],
   * or on shared heavy hitters (the other parts' tables would not follow).
   */
  decay(factor = 0.5): void {
    const scale = scaleOf(factor);
    if (this.sketch.shared) {
      throw new RangeError(
        'decay(factor) is not supported on shared heavy hitters: the other parts could not ' +
          'follow an arbitrary factor; use halfLife or halfLifeMs, whose halvings they follow',
      );
    }
    this.sync();
    this.sketch.decay(scale / SCALE_ONE);
    this.scaleTables(scale);
  }

  /** This part's table and the tables combined into it, scaled as the sketch was. */
  private scaleTables(scale: number): void {
    this.exactTable.scale(scale);
    for (const table of this.combined) {
      for (const entry of table.entries) {
        entry.exact = Math.floor((entry.exact * scale) / SCALE_ONE);
        entry.base = Math.floor((entry.base * scale) / SCALE_ONE);
      }
    }
  }

  /**
   * Applies the halvings due to the sketch, counting `events` more; `sync` then scales the
   * tables, for these halvings and those other parts applied.
   */
  private age(events: number): void {
    const halvings = (this.aging as Aging).due(events);
    if (halvings > 0) this.sketch.counters.scale(halvings > 20 ? 0 : SCALE_ONE >> halvings);
    this.sync();
  }

  /** Total of all updates. */
  get total(): number {
    return this.sketch.total;
  }

  /** Forgets everything counted, and the combined tables; a shared sketch for every part. */
  clear(): void {
    this.sketch.clear();
    this.sync();
  }
}
