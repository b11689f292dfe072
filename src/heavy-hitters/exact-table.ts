/**
 * The exact stage of heavy hitters: at most `capacity` keys, each counted exactly from the moment
 * it entered, with the smallest evicted first.
 *
 * Layout. An entry is a slot number, 0 to size - 1, whose fields live in typed arrays, not in an
 * object: as objects (boxed doubles, a Map entry each, each byte key a Uint8Array of its own) a
 * table of 762k log lines took 368 bytes per entry and most of the counting time went to the
 * collector; typed arrays are a few flat blocks it never walks. With a large table every array
 * an event touches is a cache miss, so what one event reads sits together:
 * - `records`, four int32 per slot: the tag (31 bits of the key's keyed hash and its kind, so
 *   that one comparison checks both), the slot's heap position, and where its bytes are.
 * - the heap: a binary min-heap on the upper bound (base + exact), which finds the entry to
 *   evict in O(1) and keeps every update O(log size). `bounds` holds the upper bound and exact
 *   count at each heap position, so that a bump writes one place and a sift compares adjacent
 *   doubles; `heapSlots` the slot at each position. `bases`, per slot, is only read to list.
 * - the index: open addressing with linear probing from tag to slot, at least twice as many
 *   cells as slots (so probes are short and always reach an empty cell). Keys with one tag take
 *   a cell each; lookups confirm the key itself. Removal shifts the following cells back (Knuth,
 *   TAOCP vol. 3, 6.4, Algorithm R), so that no tombstones pile up under eviction.
 * - keys: byte keys are copied into one arena, `bytes`, and compared there with the caller's
 *   range: counting a tracked key allocates nothing and reads one place. (Kept as latin1
 *   strings instead, measured on that log: 126 bytes per entry, not 116, and 4.1 s to count it,
 *   not 3.5 s, most of the difference in charCodeAt.) An evicted key's bytes stay as garbage
 *   until the arena is full; the live ones are then copied into a new arena with half as much
 *   room again as they take, so that each byte is copied O(1) times on average. Strings,
 *   numbers, bigints and AddressKeys are kept as they are in `values` (created when the first
 *   arrives) and found with `===` (an AddressKey by `equals`: one address may be keyed by
 *   several objects, one per connection); the kind in the tag keeps the string "1" and the bytes
 *   [0x31] apart.
 *
 * Arrays start small and double up to `capacity`, so that a large capacity costs nothing until
 * keys arrive to fill it.
 */
import { AddressKey } from '../hash/address-key.js';
import type { Key } from '../hash/key-hasher.js';
import { SCALE_ONE } from '../sketch/aging.js';
import type { SketchHasher } from '../sketch/sketch-options.js';

/** A key's id in the table: 31 bits of its hash, always a small integer (Smi) in V8. */
export function entryId(h1: number): number {
  return h1 >> 1;
}

/**
 * A key's kind, the low bit of its tag: a key compared by value (`===`; an AddressKey by its
 * bytes), kept in `values`.
 */
const VALUE = 0;
/** A key's kind, the low bit of its tag: bytes, kept in the arena. */
const BYTES = 1;

/** `records`: int32 per slot, and what each one is. */
const RECORD = 4;
const TAG = 0;
const POSITION = 1;
/** Unsigned: read with `>>> 0`, so the arena may grow to 4 GiB. */
const OFFSET = 2;
const LENGTH = 3;

/** An index cell that holds no slot. */
const EMPTY = -1;
/** Slots allocated before the first doubling. */
const INITIAL_SLOTS = 16;
/** Arena bytes allocated before the first doubling. */
const INITIAL_BYTES = 1024;

/**
 * A slot's id and kind in one int32, so that one comparison checks both: ids are 31-bit
 * (-2^30 to 2^30 - 1), so `id << 1` neither overflows nor collides.
 */
function tag(id: number, kind: number): number {
  return (id << 1) | kind;
}

/**
 * A count (a whole number) read from a Float64Array, as an int32 when it is one: V8 then stores
 * it in the rows made of it as a small integer, not as a HeapNumber of 16 bytes of its own.
 */
function smallInteger(count: number): number {
  return count < 2 ** 31 ? count | 0 : count;
}

export class ExactTable {
  /** Entries held; slots 0 to size - 1 are in use. */
  size = 0;
  /** RECORD int32 per slot: TAG, POSITION, OFFSET, LENGTH. */
  private records!: Int32Array;
  /** Per slot: the bound on the key's count before it entered. */
  private bases!: Float64Array;
  /** Keys of kind VALUE, by slot; empty until the first arrives. */
  private values!: (string | number | bigint | AddressKey | undefined)[];
  /** Two per heap position: the entry's upper bound (base + exact), and its exact count. */
  private bounds!: Float64Array;
  /** Slot at each heap position. */
  private heapSlots!: Int32Array;
  /** Slot by tag, EMPTY where none; a power of two long. */
  private cells!: Int32Array;
  /** 32 - log2(cells.length): the hash's top bits pick the home cell. */
  private cellShift = 0;
  /** The arena of byte keys: `bytesUsed` bytes written, of which `bytesFree` evicted. */
  private bytes!: Uint8Array;
  private bytesUsed = 0;
  private bytesFree = 0;

  constructor(readonly capacity: number) {
    this.clear(); // an empty table: the same arrays, in the same order, as after a clear
  }

  /** The slot of `key` (whose id is `id`), or -1. */
  find(id: number, key: Key): number {
    if (key instanceof Uint8Array) return this.findBytes(id, key, 0, key.length);
    const tagged = tag(id, VALUE);
    const cells = this.cells;
    const mask = cells.length - 1;
    for (let cell = this.home(tagged); ; cell = (cell + 1) & mask) {
      const slot = cells[cell];
      if (slot === EMPTY) return -1;
      if (this.records[RECORD * slot + TAG] !== tagged) continue;
      const value = this.values[slot];
      // Values are compared as JS does; an address, by its bytes (a key per connection).
      if (value === key || (value instanceof AddressKey && value.equals(key))) return slot;
    }
  }

  /** The slot of the key made of `bytes[start..end)` (whose id is `id`), or -1. */
  findBytes(id: number, bytes: Uint8Array, start: number, end: number): number {
    const tagged = tag(id, BYTES);
    const records = this.records;
    const cells = this.cells;
    const mask = cells.length - 1;
    for (let cell = this.home(tagged); ; cell = (cell + 1) & mask) {
      const slot = cells[cell];
      if (slot === EMPTY) return -1;
      const record = RECORD * slot;
      if (records[record + TAG] === tagged && records[record + LENGTH] === end - start) {
        const arena = this.bytes;
        const offset = (records[record + OFFSET] >>> 0) - start;
        let i = start;
        while (i < end && arena[offset + i] === bytes[i]) i++;
        if (i === end) return slot;
      }
    }
  }

  /** The smallest upper bound held (the next entry to evict); only when size > 0. */
  smallestUpper(): number {
    return this.bounds[0];
  }

  /** Counts `by` more for the entry in `slot`. */
  bump(slot: number, by: number): void {
    const position = this.records[RECORD * slot + POSITION];
    this.bounds[2 * position] += by;
    this.bounds[2 * position + 1] += by;
    this.siftDown(position);
  }

  /**
   * Adds `key`, not held yet, with `base` counted before it entered and `by` since; when full,
   * the entry with the smallest upper bound is evicted to make room. Bytes are copied.
   */
  insert(id: number, key: Key, base: number, by: number): void {
    if (key instanceof Uint8Array) {
      this.insertBytes(id, key, 0, key.length, base, by);
      return;
    }
    const slot = this.place(tag(id, VALUE), base, by);
    const values = this.values;
    while (values.length < slot) values.push(undefined); // dense, never a sparse array
    values[slot] = key;
  }

  /**
   * Room in the arena for `length` more bytes. Called before anything changes: making room can
   * fail (an arena past 4 GiB), and then the table must be as it was. A key evicted after it is
   * still live here, so its bytes are kept by this compaction and become garbage for the next.
   */
  reserveBytes(length: number): void {
    if (this.bytesUsed + length > this.bytes.length) this.makeRoom(length);
  }

  /** `insert` for the key made of `bytes[start..end)`, copied. */
  insertBytes(
    id: number,
    bytes: Uint8Array,
    start: number,
    end: number,
    base: number,
    by: number,
  ): void {
    const length = end - start;
    this.reserveBytes(length);
    const slot = this.place(tag(id, BYTES), base, by);
    const record = RECORD * slot;
    const offset = this.bytesUsed;
    const arena = this.bytes;
    for (let i = 0; i < length; i++) arena[offset + i] = bytes[start + i];
    this.bytesUsed = offset + length;
    this.records[record + OFFSET] = offset;
    this.records[record + LENGTH] = length;
    if (slot < this.values.length) this.values[slot] = undefined;
  }

  // Entries by position, 0 to size - 1, in no particular order (the heap's).

  /** The key at `position`: a fresh Uint8Array when it is bytes. */
  key(position: number): Key {
    const slot = this.heapSlots[position];
    const record = RECORD * slot;
    if ((this.records[record + TAG] & 1) === VALUE) return this.values[slot] as Key;
    const offset = this.records[record + OFFSET] >>> 0;
    // Not slice(): V8 keeps a small array made from another on its heap, ~36 bytes less a key.
    return new Uint8Array(this.bytes.subarray(offset, offset + this.records[record + LENGTH]));
  }

  /** Hashes the key at `position` with `hasher`, in place (no copy of a byte key). */
  hashKey(position: number, hasher: SketchHasher): void {
    const slot = this.heapSlots[position];
    const record = RECORD * slot;
    if ((this.records[record + TAG] & 1) === VALUE) {
      hasher.hash(this.values[slot] as Key);
      return;
    }
    const offset = this.records[record + OFFSET] >>> 0;
    hasher.hashBytes(this.bytes, offset, offset + this.records[record + LENGTH]);
  }

  exact(position: number): number {
    return smallInteger(this.bounds[2 * position + 1]);
  }

  base(position: number): number {
    return smallInteger(this.bases[this.heapSlots[position]]);
  }

  upper(position: number): number {
    return smallInteger(this.bounds[2 * position]);
  }

  /**
   * Multiplies every entry's exact count and base by scale / 2^20, each rounded down (a key's
   * count is then its two parts, before and since it entered, each decayed; see aging.ts), and
   * restores the heap, whose order the rounding can change.
   */
  scale(scale: number): void {
    const bounds = this.bounds;
    for (let position = 0; position < this.size; position++) {
      const slot = this.heapSlots[position];
      const exact = Math.floor((bounds[2 * position + 1] * scale) / SCALE_ONE);
      const base = Math.floor((this.bases[slot] * scale) / SCALE_ONE);
      this.bases[slot] = base;
      bounds[2 * position] = base + exact;
      bounds[2 * position + 1] = exact;
    }
    for (let position = (this.size >> 1) - 1; position >= 0; position--) this.siftDown(position);
  }

  /** Forgets every entry and gives back the memory they took. */
  clear(): void {
    const slots = Math.min(this.capacity, INITIAL_SLOTS);
    this.size = 0;
    this.records = new Int32Array(RECORD * slots);
    this.bases = new Float64Array(slots);
    this.values = [];
    this.bounds = new Float64Array(2 * slots);
    this.heapSlots = new Int32Array(slots);
    this.cells = this.emptyCells(slots);
    this.bytes = new Uint8Array(INITIAL_BYTES);
    this.bytesUsed = 0;
    this.bytesFree = 0;
  }

  /**
   * A slot for a new entry (the smallest's, evicted, when full) with its tag, counts and heap
   * position set; the caller stores its key.
   */
  private place(tagged: number, base: number, by: number): number {
    const evicting = this.size === this.capacity;
    let slot: number;
    let position: number;
    if (evicting) {
      slot = this.heapSlots[0];
      position = 0;
      this.unindex(slot);
      if ((this.records[RECORD * slot + TAG] & 1) === BYTES) {
        this.bytesFree += this.records[RECORD * slot + LENGTH];
      }
    } else {
      if (this.size === this.heapSlots.length) this.grow();
      slot = this.size;
      position = this.size;
      this.size++;
    }
    this.records[RECORD * slot + TAG] = tagged;
    this.bases[slot] = base;
    this.heapSlots[position] = slot;
    this.bounds[2 * position] = base + by;
    this.bounds[2 * position + 1] = by;
    this.index(slot);
    if (evicting) this.siftDown(0);
    else this.siftUp(position);
    return slot;
  }

  /**
   * Room at the arena's end for `length` more bytes: the live keys are copied into a new arena
   * with at least half as much room again as they take (so each compaction copies at most twice
   * what was written since the last one), which grows it, or shrinks it after evictions.
   */
  private makeRoom(length: number): void {
    const live = this.bytesUsed - this.bytesFree + length;
    let arenaLength = INITIAL_BYTES;
    while (arenaLength < live + live / 2) arenaLength *= 2;
    const old = this.bytes;
    const arena = new Uint8Array(arenaLength);
    if (this.bytesFree === 0) {
      arena.set(old.subarray(0, this.bytesUsed));
    } else {
      // Slot order, not offset order: offsets are rewritten, so any order compacts.
      const records = this.records;
      let used = 0;
      for (let slot = 0; slot < this.size; slot++) {
        const record = RECORD * slot;
        if ((records[record + TAG] & 1) !== BYTES) continue;
        const offset = records[record + OFFSET] >>> 0;
        const keyLength = records[record + LENGTH];
        for (let i = 0; i < keyLength; i++) arena[used + i] = old[offset + i];
        records[record + OFFSET] = used;
        used += keyLength;
      }
      this.bytesUsed = used;
      this.bytesFree = 0;
    }
    this.bytes = arena;
  }

  /** Home cell of a tag: Fibonacci hashing, so that tags close together spread out. */
  private home(tagged: number): number {
    return Math.imul(tagged, 0x9e3779b1) >>> this.cellShift;
  }

  private index(slot: number): void {
    const cells = this.cells;
    const mask = cells.length - 1;
    let cell = this.home(this.records[RECORD * slot + TAG]);
    while (cells[cell] !== EMPTY) cell = (cell + 1) & mask;
    cells[cell] = slot;
  }

  private unindex(slot: number): void {
    const cells = this.cells;
    const mask = cells.length - 1;
    let hole = this.home(this.records[RECORD * slot + TAG]);
    while (cells[hole] !== slot) hole = (hole + 1) & mask;
    // Shift back each following entry that may live in the hole: one whose home is not
    // cyclically within (hole, cell]. Lookups then never meet an empty cell before their key.
    for (let cell = (hole + 1) & mask; cells[cell] !== EMPTY; cell = (cell + 1) & mask) {
      const moved = cells[cell];
      const home = this.home(this.records[RECORD * moved + TAG]);
      if (((cell - home) & mask) >= ((cell - hole) & mask)) {
        cells[hole] = moved;
        hole = cell;
      }
    }
    cells[hole] = EMPTY;
  }

  /** Doubles the slots (up to capacity), and the index with them. */
  private grow(): void {
    const slots = Math.min(this.capacity, 2 * this.heapSlots.length);
    const records = new Int32Array(RECORD * slots);
    records.set(this.records);
    this.records = records;
    const bases = new Float64Array(slots);
    bases.set(this.bases);
    this.bases = bases;
    const bounds = new Float64Array(2 * slots);
    bounds.set(this.bounds);
    this.bounds = bounds;
    const heapSlots = new Int32Array(slots);
    heapSlots.set(this.heapSlots);
    this.heapSlots = heapSlots;
    if (this.cells.length < 2 * slots) {
      this.cells = this.emptyCells(slots);
      for (let slot = 0; slot < this.size; slot++) this.index(slot);
    }
  }

  /** An empty index for `slots` slots: at least twice as many cells, a power of two. */
  private emptyCells(slots: number): Int32Array {
    let bits = 2;
    while (1 << bits < 2 * slots) bits++;
    this.cellShift = 32 - bits;
    return new Int32Array(1 << bits).fill(EMPTY);
  }

  private siftUp(position: number): void {
    const bounds = this.bounds;
    const slot = this.heapSlots[position];
    const upper = bounds[2 * position];
    const exact = bounds[2 * position + 1];
    while (position > 0) {
      const parent = (position - 1) >> 1;
      if (bounds[2 * parent] <= upper) break;
      this.shift(parent, position);
      position = parent;
    }
    this.settle(position, slot, upper, exact);
  }

  private siftDown(position: number): void {
    const bounds = this.bounds;
    const size = this.size;
    const slot = this.heapSlots[position];
    const upper = bounds[2 * position];
    const exact = bounds[2 * position + 1];
    for (;;) {
      let child = 2 * position + 1;
      if (child >= size) break;
      if (child + 1 < size && bounds[2 * child + 2] < bounds[2 * child]) child++;
      if (bounds[2 * child] >= upper) break;
      this.shift(child, position);
      position = child;
    }
    this.settle(position, slot, upper, exact);
  }

  /** Moves the heap entry at `from` to `to` (a sift's step; `to`'s entry is held by the caller). */
  private shift(from: number, to: number): void {
    const moved = this.heapSlots[from];
    this.heapSlots[to] = moved;
    this.bounds[2 * to] = this.bounds[2 * from];
    this.bounds[2 * to + 1] = this.bounds[2 * from + 1];
    this.records[RECORD * moved + POSITION] = to;
  }

  /** Puts the entry of `slot`, with its bounds, at heap `position` (where a sift ends). */
  private settle(position: number, slot: number, upper: number, exact: number): void {
    this.heapSlots[position] = slot;
    this.bounds[2 * position] = upper;
    this.bounds[2 * position + 1] = exact;
    this.records[RECORD * slot + POSITION] = position;
  }
}
