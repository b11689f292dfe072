/**
 * The sketch's kernel: the operations on a key's cells by its hash (h1, h2) that every structure
 * built on the sketch runs (estimate, increment by the sketch's rule, add by the plain rule,
 * raise within a floor and a ceiling), each written once over the Counters seam, with the column
 * mapping of columns.ts. Where the WebAssembly engine runs the sketch, every operation runs
 * there (the same rule, bit for bit: the engine's tests hold them to this code); the choice is
 * made once, when the kernel is made. CountMinSketch is its public face; HeavyHitters, the limits
 * and Inflight use it by hash, so that a key is hashed once per call whatever they do with it.
 *
 * Conservative update (Estan & Varghese, "New directions in traffic measurement and
 * accounting", SIGCOMM 2002): an increment raises each of the key's cells only up to
 * (current estimate + by) instead of adding to all of them. Every cell of a key stays at least
 * its true count, so estimates are still never low, and cells grow less, so estimates are
 * tighter (cell by cell never above the plain sketch of the same stream). It cannot decrement:
 * a decrement would have to know which cells were raised by this key. The limits (src/limits)
 * run it with a floor and a ceiling (`raiseWithin`): a rate limiter's admission test and update
 * in one atomic step, GCRA's raise-only times.
 */
import type { Engine } from '../engine/engine.js';
import { cellsOf } from './columns.js';
import { type Counters, SATURATED } from './counters.js';

/** The shape and rule of a kernel's cells. */
export interface KernelShape {
  width: number;
  depth: number;
  conservative: boolean;
}

export class SketchKernel {
  readonly width: number;
  readonly depth: number;
  readonly conservative: boolean;
  readonly counters: Counters;
  /** The engine, or null for this JS reference. */
  private readonly engine: Engine | null;
  /** The engine where it runs raiseWithin too (depth up to WITHIN_DEPTH), else null. */
  private readonly within: Engine | null;
  /** Scratch: the key's cell in each row, computed once per update. */
  private readonly rowCells: Int32Array;
  /** Scratch: what the conservative rule read in each row. */
  private readonly rowValues: Int32Array;

  /** `engine`: the engine over `counters`' memory, or null; `within`: it, where it steps. */
  constructor(counters: Counters, shape: KernelShape, engine: Engine | null, within: boolean) {
    this.width = shape.width;
    this.depth = shape.depth;
    this.conservative = shape.conservative;
    this.counters = counters;
    this.engine = engine;
    this.within = within ? engine : null;
    this.rowCells = new Int32Array(shape.depth);
    this.rowValues = new Int32Array(shape.depth);
  }

  /** The key's estimate: the least of its cells. */
  estimate(h1: number, h2: number): number {
    const engine = this.engine;
    if (engine !== null) return engine.estimateHash(h1, h2);
    const counters = this.counters;
    const rowCells = cellsOf(h1, h2, this.width, this.depth, this.rowCells);
    let min = SATURATED;
    for (let row = 0; row < this.depth; row++) {
      const value = counters.load(rowCells[row]);
      if (value < min) min = value;
    }
    return min;
  }

  /** Adds `by` (>= 0, validated) by the sketch's rule; returns the key's estimate after it. */
  increment(h1: number, h2: number, by: number): number {
    const engine = this.engine;
    if (engine !== null) return engine.incrementHash(h1, h2, by);
    return this.conservative ? this.raise(h1, h2, by) : this.add(h1, h2, by);
  }

  /**
   * Plain update: adds a signed `delta` to every row's cell (a plain sketch's rule; a decrement,
   * Inflight's release); the estimate, the least of the results, is returned.
   */
  add(h1: number, h2: number, delta: number): number {
    const engine = this.engine;
    if (engine !== null) return engine.addHash(h1, h2, delta);
    const counters = this.counters;
    const min = counters.addEach(
      cellsOf(h1, h2, this.width, this.depth, this.rowCells),
      this.depth,
      delta,
    );
    counters.addTotal(delta);
    return min;
  }

  /**
   * Adds `amount` (>= 0, any size) to the key's cells by the sketch's rule, and not to the
   * total, which holds it already: HeavyHitters gives an evicted key's exact count back.
   */
  incrementCells(h1: number, h2: number, amount: number): void {
    for (let left = amount; left > 0; ) {
      const part = Math.min(left, SATURATED);
      this.increment(h1, h2, part);
      this.counters.addTotal(-part);
      left -= part;
    }
  }

  /** Adds `by` to the total only: HeavyHitters counts a tracked key's event there. */
  addTotal(by: number): void {
    this.counters.addTotal(by);
  }

  /**
   * Conservative update: raises every row's cell to (estimate + by), saturating.
   *
   * Written so that it never underestimates when threads update one key at once (shared
   * storage). The obvious rule does: two threads both read the estimate m and both raise the
   * cells to m + by, so the key gains by instead of 2 by. Here an attempt reads every cell
   * (s_i, least m, target t = m + by), then sets each cell below t with a compare-and-set from
   * s_i, and starts over if any of them fails. Cells of a conservative sketch only grow (no
   * decrement; merge adds), so a set that succeeds means its cell held s_i from the read to the
   * set. Call an attempt's span the time from its last read to its first set: throughout it,
   * the cells it sets hold their s_i (< t) and the others hold >= t. For two successful attempts
   * A and B of one key, [m_A, t_A) and [m_B, t_B) are disjoint:
   * - If the spans overlap: A's least cell j holds m_A there. B cannot set j too (whichever set
   *   came first would change j inside the other's read-to-set interval), so B skipped it,
   *   having read >= t_B: m_A >= t_B.
   * - If A's span ends before B's begins: B's least cell k held m_B from B's read of it to B's
   *   set, which comes after all of A's reads. Had A set k, it did so before B read it (later
   *   falls inside one of the read-to-set intervals), so m_B >= t_A. Had A skipped k, it read
   *   >= t_A there, and B read that value or a later one: m_B >= t_A.
   * So a key's successful updates, ordered by m, each start at or above the previous one's t;
   * the last t is at least the sum of their amounts, and every cell ends at least there.
   * Lock-free: a failed set means another thread's succeeded. (In one thread the sets never
   * fail; LocalCounters.raiseFrom does not even compare.)
   */
  private raise(h1: number, h2: number, by: number): number {
    return this.raiseWithin(h1, h2, -SATURATED, by, SATURATED);
  }

  /**
   * The conservative rule with a floor and a ceiling, for the limits built on the
   * sketch (src/limits): raises the key's cells to target = max(estimate, floor) + by
   * (saturating), unless target > ceiling, in which case nothing is written; returns target
   * either way. `raise` is the case floor = -SATURATED, ceiling = SATURATED. The argument
   * above holds unchanged (it never looks at how the target is computed from what was read),
   * so in shared storage each key's successful updates, in order, each start at or above the
   * previous one's target: an admission decided on a read that another thread made stale is
   * retried, never granted twice. `by` >= 0 and floor, ceiling within +-SATURATED.
   */
  raiseWithin(h1: number, h2: number, floor: number, by: number, ceiling: number): number {
    const within = this.within;
    if (within !== null) return within.raiseWithin(h1, h2, floor, by, ceiling);
    const counters = this.counters;
    const depth = this.depth;
    const rowCells = cellsOf(h1, h2, this.width, depth, this.rowCells);
    const rowValues = this.rowValues;
    for (;;) {
      let estimate = SATURATED;
      for (let row = 0; row < depth; row++) {
        const value = counters.load(rowCells[row]);
        rowValues[row] = value;
        if (value < estimate) estimate = value;
      }
      const base = Math.max(estimate, floor);
      const target = base >= SATURATED - by ? SATURATED : base + by;
      if (target > ceiling) return target;
      let row = 0;
      while (
        row < depth &&
        (rowValues[row] >= target || counters.raiseFrom(rowCells[row], rowValues[row], target))
      ) {
        row++;
      }
      if (row === depth) {
        counters.addTotal(by);
        return target;
      }
    }
  }
}
