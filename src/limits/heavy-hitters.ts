/**
 * Heavy hitters: the sketch as a first-stage filter in front of an exact table (the two-stage
 * design Cloudflare describes for finding top talkers at line rate).
 *
 * Every event updates the sketch. A key enters the exact table once its estimate reaches
 * `threshold` and, when the table is full, exceeds the smallest count in it (which is evicted).
 * From then on it is counted exactly. So memory is the sketch plus `capacity` entries, whatever
 * the number of distinct keys, and the keys that matter are counted exactly for most of their
 * life.
 *
 * Bounds. When a key enters with estimate e after an event of `by`, its count before that event
 * was at most e - by (the sketch never underestimates) and at least 0. Afterwards we count
 * exactly, so with x counted since entering (including that event):
 *   lowerBound = x <= true count <= (e - by) + x,
 * and the sketch's current estimate is an upper bound too; `upperBound` is the smaller of both.
 * `count`, the ranking, is the upper bound (as in Space-Saving, Metwally et al., ICDT 2005):
 * it is exact for keys that entered on their first event, and over by at most the
 * sketch's error at the time of entry otherwise, which is small because heavy keys enter early.
 */
import { integerIn, typeError } from '../errors.js';
import type { Key } from '../hash/key-hasher.js';
import { type CountMinOptions, CountMinSketch, checkAmount } from '../sketch/count-min.js';
import { SATURATED } from '../sketch/counters.js';
import { Entry, ExactTable, entryId } from './exact-table.js';

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

export interface HeavyHitter {
  key: Key;
  /** What the ranking uses: the upper bound. */
  count: number;
  /** The true count is at least this. */
  lowerBound: number;
  /** The true count is at most this. */
  upperBound: number;
}

/** Most entries a table may hold: keeps a configuration typo from allocating gigabytes. */
const MAX_CAPACITY = 2 ** 24;

/** A private copy (Buffer#slice would return a view into the caller's memory). */
function copyBytes(bytes: Uint8Array, start: number, end: number): Uint8Array {
  return new Uint8Array(bytes.subarray(start, end));
}

function sameKey(stored: Key, key: Key): boolean {
  if (stored === key) return true;
  if (!(stored instanceof Uint8Array) || !(key instanceof Uint8Array)) return false;
  return sameRange(stored, key, 0, key.length);
}

function sameRange(stored: Key, bytes: Uint8Array, start: number, end: number): boolean {
  if (!(stored instanceof Uint8Array) || stored.length !== end - start) return false;
  for (let i = 0; i < stored.length; i++) if (stored[i] !== bytes[start + i]) return false;
  return true;
}

export class HeavyHitters {
  /** How many keys `top()` reports by default. */
  readonly k: number;
  /** Keys the exact table holds. */
  readonly capacity: number;
  /** Estimate a key must reach to enter the exact table. */
  readonly threshold: number;
  /** The first stage: estimates for every key, tracked or not. */
  readonly sketch: CountMinSketch;
  private readonly table: ExactTable;

  constructor(options: HeavyHittersOptions) {
    if (options === null || typeof options !== 'object') {
      throw typeError('options', 'an object with k', options);
    }
    this.k = integerIn('k', options.k, 1, MAX_CAPACITY);
    this.capacity =
      options.capacity === undefined
        ? Math.min(4 * this.k, MAX_CAPACITY)
        : integerIn('capacity', options.capacity, this.k, MAX_CAPACITY);
    this.threshold =
      options.threshold === undefined ? 1 : integerIn('threshold', options.threshold, 1, SATURATED);
    // Conservative update by default: heavy hitters never decrement, and tighter estimates
    // mean fewer cold keys pass the filter and smaller bounds for those that do.
    this.sketch = new CountMinSketch({ ...options, conservative: options.conservative ?? true });
    this.table = new ExactTable(this.capacity);
  }

  /** Counts `by` (default 1) more of `key`. */
  add(key: Key, by = 1): void {
    checkAmount(by);
    const sketch = this.sketch;
    sketch.hasher.hash(key);
    const estimate = sketch.incrementHash(sketch.hasher.h1, sketch.hasher.h2, by);
    const id = entryId(sketch.hasher.h1);
    for (let entry = this.table.first(id); entry !== undefined; entry = entry.next) {
      if (sameKey(entry.key, key)) {
        this.table.bump(entry, by);
        return;
      }
    }
    if (this.admits(estimate)) {
      this.table.insert(
        new Entry(
          id,
          key instanceof Uint8Array ? copyBytes(key, 0, key.length) : key,
          estimate - by,
          by,
        ),
      );
    }
  }

  /**
   * Counts the key made of `bytes[start..end)` without copying it unless it enters the table:
   * the path `hotcount top` uses for lines read into a large buffer. `by` is not validated.
   * @internal
   */
  addBytes(bytes: Uint8Array, start: number, end: number, by: number): void {
    const sketch = this.sketch;
    sketch.hasher.hashBytes(bytes, start, end);
    const estimate = sketch.incrementHash(sketch.hasher.h1, sketch.hasher.h2, by);
    const id = entryId(sketch.hasher.h1);
    for (let entry = this.table.first(id); entry !== undefined; entry = entry.next) {
      if (sameRange(entry.key, bytes, start, end)) {
        this.table.bump(entry, by);
        return;
      }
    }
    if (this.admits(estimate)) {
      this.table.insert(new Entry(id, copyBytes(bytes, start, end), estimate - by, by));
    }
  }

  private admits(estimate: number): boolean {
    if (estimate < this.threshold) return false;
    const table = this.table;
    return table.size < table.capacity || estimate > (table.smallest() as Entry).upper;
  }

  /** The `n` (default k) heaviest tracked keys, by count, descending. */
  top(n: number = this.k): HeavyHitter[] {
    integerIn('n', n, 0, MAX_CAPACITY);
    const sketch = this.sketch;
    const rows: HeavyHitter[] = [];
    for (const entry of this.table.entries()) {
      const estimate = sketch.estimate(entry.key);
      // A saturated estimate reads "at least 2^31 - 1": it bounds nothing from above.
      const upper = estimate < SATURATED && estimate < entry.upper ? estimate : entry.upper;
      const key =
        entry.key instanceof Uint8Array ? copyBytes(entry.key, 0, entry.key.length) : entry.key;
      rows.push({ key, count: upper, lowerBound: entry.exact, upperBound: upper });
    }
    rows.sort((a, b) => b.count - a.count || b.lowerBound - a.lowerBound);
    return rows.slice(0, n);
  }

  /** Total of all updates. */
  get total(): number {
    return this.sketch.total;
  }

  /** Forgets everything counted. */
  clear(): void {
    this.sketch.clear();
    this.table.clear();
  }
}
