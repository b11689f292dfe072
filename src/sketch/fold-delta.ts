/**
 * The private delta of a shared sketch made with `foldEvery` (count-min.ts): this thread counts
 * into local cells of the same shape and secret, and adds them to the shared cells once
 * `foldEvery` has been counted, so that threads stop handing the cells' cache lines to one
 * another on every update. One hash serves both (the same secret).
 *
 * An estimate is the delta's plus the shared one: never under what this object counted and
 * every thread folded. The delta's least cell holds at least this object's unfolded count of the
 * key, the shared cells' least at least the folded counts (increments only, so no cell holds
 * less than the counts hashed to it), and the two minima added are never above the least row
 * sum. A clear of the shared sketch by any thread makes the delta's counts forgotten too: they
 * were counted before it.
 */
import type { Key } from '../hash/key-hasher.js';
import { KeyHasher } from '../hash/key-hasher.js';
import { type Counters, saturatingSum } from './counters.js';
import { SketchKernel } from './kernel.js';
import { placeCounters } from './placement.js';
import type { SharedCounters } from './shared-counters.js';
import type { EngineName, SketchHasher } from './sketch-options.js';

/** What the delta is made like: the shared sketch's shape, secret and engine. */
export interface DeltaShape {
  width: number;
  depth: number;
  keyWords: readonly [number, number];
  fingerprint: Uint8Array;
  engine: EngineName;
}

export class FoldDelta {
  /** What the delta may hold before it is folded. */
  readonly foldEvery: number;
  private readonly kernel: SketchKernel;
  private readonly counters: Counters;
  private readonly hasher: SketchHasher;
  private readonly shared: SharedCounters;
  /** What the delta holds (the amounts counted into it since the last fold). */
  private amount = 0;
  /** The shared clears seen. */
  private clearsSeen: number;

  constructor(foldEvery: number, shared: SharedCounters, shape: DeltaShape) {
    const { width, depth, keyWords, fingerprint } = shape;
    const { counters, engine } = placeCounters({
      width,
      depth,
      conservative: false,
      shared: false,
      fingerprint,
      keyWords,
      asked: shape.engine,
    });
    this.foldEvery = foldEvery;
    this.counters = counters;
    this.kernel = new SketchKernel(counters, { width, depth, conservative: false }, engine, false);
    this.hasher = engine ?? new KeyHasher(keyWords[0], keyWords[1]);
    this.shared = shared;
    this.clearsSeen = shared.clears;
  }

  /**
   * Adds `by` to the key in the delta (by -1: reads only) and returns the delta's estimate
   * plus the shared one (`sharedKernel`'s), folding once the delta holds `foldEvery`.
   */
  count(key: Key, by: number, sharedKernel: SketchKernel): number {
    this.forgetIfCleared();
    const hasher = this.hasher;
    hasher.hash(key);
    const h1 = hasher.h1;
    const h2 = hasher.h2;
    const own = by < 0 ? this.kernel.estimate(h1, h2) : this.kernel.increment(h1, h2, by);
    const estimate = saturatingSum(own, sharedKernel.estimate(h1, h2));
    if (by > 0) {
      this.amount += by;
      if (this.amount >= this.foldEvery) this.fold();
    }
    return estimate;
  }

  /** Adds the delta to the shared cells and total now (nothing if they were cleared since). */
  fold(): void {
    if (this.forgetIfCleared()) return;
    const total = this.counters.total;
    this.shared.foldFrom(this.counters.cells);
    if (total !== 0) this.shared.addTotal(total);
    this.forget();
  }

  /** What the delta holds, of the total (0 once a clear made it forgotten). */
  get total(): number {
    this.forgetIfCleared();
    return this.counters.total;
  }

  get saturated(): boolean {
    return this.counters.saturated;
  }

  get memoryBytes(): number {
    return this.counters.memoryBytes;
  }

  /** Scales the delta's cells as the shared ones were (decay). */
  scale(scale: number): void {
    this.counters.scale(scale);
  }

  /** Forgets what the delta holds (the shared sketch was cleared by this thread). */
  forget(): void {
    this.counters.clear();
    this.amount = 0;
    this.clearsSeen = this.shared.clears;
  }

  /** Forgets what the delta holds if another thread cleared the shared sketch; whether it did. */
  private forgetIfCleared(): boolean {
    if (this.shared.clears === this.clearsSeen) return false;
    this.forget();
    return true;
  }
}
