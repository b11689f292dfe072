/**
 * The exact stage of heavy hitters: at most `capacity` keys, each counted exactly from the moment
 * it entered, with the smallest evicted first.
 *
 * Entries are found by a 31-bit id taken from the key's keyed hash (a small integer, so the Map
 * lookup allocates nothing), with a chain for the rare keys that share an id; the caller confirms
 * the key itself. A binary min-heap on each entry's upper bound finds the entry to evict in O(1)
 * and keeps every update O(log capacity).
 */
import type { Key } from '../hash/key-hasher.js';

export class Entry {
  /** Upper bound on the key's true count: `base + exact`. */
  upper: number;
  /** Counted exactly since the key entered (its lower bound). */
  exact: number;
  /** Position in the heap. */
  heapIndex = 0;
  /** Next entry with the same id. */
  next: Entry | undefined = undefined;

  constructor(
    readonly id: number,
    readonly key: Key,
    /** Upper bound on the count before the key entered: the sketch's estimate then. */
    readonly base: number,
    by: number,
  ) {
    this.exact = by;
    this.upper = base + by;
  }
}

/** A key's id in the table: 31 bits of its hash, always a small integer (Smi) in V8. */
export function entryId(h1: number): number {
  return h1 >> 1;
}

export class ExactTable {
  private readonly byId = new Map<number, Entry>();
  private readonly heap: Entry[] = [];

  constructor(readonly capacity: number) {}

  get size(): number {
    return this.heap.length;
  }

  /** The first entry whose id is `id`; follow `next` for the others. */
  first(id: number): Entry | undefined {
    return this.byId.get(id);
  }

  /** The entry with the smallest upper bound (the next to evict), if any. */
  smallest(): Entry | undefined {
    return this.heap[0];
  }

  /** Counts `by` more for an entry. */
  bump(entry: Entry, by: number): void {
    entry.exact += by;
    entry.upper += by;
    this.siftDown(entry.heapIndex);
  }

  /** Adds an entry; when full, the smallest is evicted to make room. */
  insert(entry: Entry): void {
    const head = this.byId.get(entry.id);
    if (head !== undefined) entry.next = head;
    this.byId.set(entry.id, entry);
    if (this.heap.length < this.capacity) {
      entry.heapIndex = this.heap.length;
      this.heap.push(entry);
      this.siftUp(entry.heapIndex);
      return;
    }
    this.unlink(this.heap[0]);
    entry.heapIndex = 0;
    this.heap[0] = entry;
    this.siftDown(0);
  }

  /** Every entry, in no particular order. */
  entries(): readonly Entry[] {
    return this.heap;
  }

  clear(): void {
    this.byId.clear();
    this.heap.length = 0;
  }

  private unlink(entry: Entry): void {
    let head = this.byId.get(entry.id);
    if (head === entry) {
      if (entry.next === undefined) this.byId.delete(entry.id);
      else this.byId.set(entry.id, entry.next);
      return;
    }
    while (head !== undefined && head.next !== entry) head = head.next;
    if (head !== undefined) head.next = entry.next;
  }

  private siftUp(index: number): void {
    const heap = this.heap;
    const entry = heap[index];
    while (index > 0) {
      const parentIndex = (index - 1) >> 1;
      const parent = heap[parentIndex];
      if (parent.upper <= entry.upper) break;
      heap[index] = parent;
      parent.heapIndex = index;
      index = parentIndex;
    }
    heap[index] = entry;
    entry.heapIndex = index;
  }

  private siftDown(index: number): void {
    const heap = this.heap;
    const size = heap.length;
    const entry = heap[index];
    for (;;) {
      let child = 2 * index + 1;
      if (child >= size) break;
      if (child + 1 < size && heap[child + 1].upper < heap[child].upper) child++;
      if (heap[child].upper >= entry.upper) break;
      heap[index] = heap[child];
      heap[index].heapIndex = index;
      index = child;
    }
    heap[index] = entry;
    entry.heapIndex = index;
  }
}
