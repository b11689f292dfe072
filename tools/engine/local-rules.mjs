/**
 * The update rules over this thread's cells (the `local` module): plain loads and stores, one
 * writer, and the volume and total kept in locals while a call runs.
 */
import { SATURATED } from './layout.mjs';
import {
  estimate,
  forEachRow,
  inDepth,
  isStuck,
  minInto,
  ROWS_IN_LOCALS,
  readRows,
  saturatingSum,
  target,
} from './rows.mjs';
import { c, field, get, LOCAL_CELLS, lines, set } from './wat.mjs';

/**
 * Plain update of this thread's cells (count-min.ts addHash over LocalCounters.addEach): while
 * the volume (a bound on every |cell|) plus |delta| stays below SATURATED, no cell can reach a
 * limit, so the cells are added to without checks; otherwise each cell saturates and sticks as
 * LocalCounters.add does. The least new value into `min`; the total gains delta.
 */
export function localAdd() {
  return lines(
    set('min', c(SATURATED)),
    set(
      'mag',
      `(select (i32.sub ${c(0)} ${get('delta')}) ${get('delta')} (i32.lt_s ${get('delta')} ${c(0)}))`,
    ),
    `(if (i32.lt_u (i32.add ${get('vol')} ${get('mag')}) ${c(SATURATED)})`,
    `(then ${set('vol', `(i32.add ${get('vol')} ${get('mag')})`)}`,
    forEachRow(
      LOCAL_CELLS,
      lines(
        set('v', `(i32.add (i32.load ${get('a')}) ${get('delta')})`),
        `(i32.store ${get('a')} ${get('v')})`,
        minInto('min', get('v')),
      ),
    ),
    ')',
    '(else',
    forEachRow(
      LOCAL_CELLS,
      lines(
        set('r', `(i32.load ${get('a')})`),
        `(if (i32.eqz ${isStuck(get('r'))}) (then`,
        set('r', saturatingSum(get('r'), get('delta'))),
        `(i32.store ${get('a')} ${get('r')})`,
        set(
          'mag',
          `(select (i32.sub ${c(0)} ${get('r')}) ${get('r')} (i32.lt_s ${get('r')} ${c(0)}))`,
        ),
        `(if (i32.eq ${get('mag')} ${c(SATURATED)}) (then (i32.store ${field('saturated')} ${c(1)})))`,
        `(if (i32.gt_s ${get('mag')} ${get('vol')}) (then ${set('vol', get('mag'))}))`,
        '))',
        minInto('min', get('r')),
      ),
    ),
    '))',
    set('count', `(i64.add ${get('count')} (i64.extend_i32_s ${get('delta')}))`),
  );
}

/**
 * The volume and the total of a local engine are kept in locals while a call runs (in a batch,
 * across all its keys, so that no key waits for the previous key's store of them), read before
 * and written back after.
 */
export const localPrologue = () =>
  lines(set('vol', `(i32.load ${field('volume')})`), set('count', '(i64.const 0)'));
/** Writes back what localPrologue read (see there). */
export const localEpilogue = () =>
  lines(
    `(i32.store ${field('volume')} ${get('vol')})`,
    `(f64.store ${field('total')} (f64.add (f64.load ${field('total')}) (f64.convert_i64_s ${get('count')})))`,
  );

/**
 * Conservative update of this thread's cells (count-min.ts raiseHash over LocalCounters): read
 * the estimate m, then raise every cell below t = m + by (saturating) to t; a cell stuck at
 * -SATURATED stays. Up to ROWS_IN_LOCALS rows, each row's address and value stay in locals
 * between the two passes (measured: 1.6x the plain update's time when both passes computed
 * the columns and loaded the cells); deeper sketches run the loop twice. One thread: nothing
 * writes between the passes, so the second pass of the loop reads what the first read.
 */
export function localRaise() {
  const raise = (a) =>
    lines(
      `(i32.store ${a} ${get('t')})`,
      `(if (i32.eq ${get('t')} ${c(SATURATED)}) (then (i32.store ${field('saturated')} ${c(1)})))`,
      `(if (i32.gt_s ${get('t')} ${get('vol')}) (then ${set('vol', get('t'))}))`,
    );
  const below = (v) => `(i32.and (i32.lt_s ${v} ${get('t')}) (i32.ne ${v} ${c(-SATURATED)}))`;
  return lines(
    `(if (i32.le_u (global.get $depth) ${c(ROWS_IN_LOCALS)}) (then`,
    readRows(LOCAL_CELLS, (a) => `(i32.load ${a})`),
    target(),
    raiseInLocals(),
    ') (else',
    estimate(LOCAL_CELLS, (a) => `(i32.load ${a})`),
    target(),
    forEachRow(
      LOCAL_CELLS,
      lines(
        set('v', `(i32.load ${get('a')})`),
        `(if ${below(get('v'))} (then ${raise(get('a'))}))`,
      ),
    ),
    '))',
    set('count', `(i64.add ${get('count')} (i64.extend_i32_s ${get('delta')}))`),
  );
}

/**
 * The second pass of a local conservative update over the rows readRows kept in locals: every
 * cell below t (and not stuck at -SATURATED) raised to t. Branch-free: whether a cell is below
 * t is as random as the cells, so a branch on it mispredicts; every cell is stored, with
 * max(s, t) (a stuck cell with itself), and the flag and volume are set once, from whether any
 * cell was raised.
 */
export function raiseInLocals() {
  const below = (v) => `(i32.and (i32.lt_s ${v} ${get('t')}) (i32.ne ${v} ${c(-SATURATED)}))`;
  return lines(
    set('raised', c(0)),
    [...Array(ROWS_IN_LOCALS).keys()].map((row) => {
      const s = get(`s${row}`);
      return lines(
        `(if ${inDepth(row)} (then`,
        set('r', below(s)),
        set('raised', `(i32.or ${get('raised')} ${get('r')})`),
        `(i32.store ${get(`a${row}`)} (select ${get('t')} ${s} ${get('r')}))`,
        '))',
      );
    }),
    `(if ${get('raised')} (then`,
    `(if (i32.eq ${get('t')} ${c(SATURATED)}) (then (i32.store ${field('saturated')} ${c(1)})))`,
    set('vol', `(select ${get('t')} ${get('vol')} (i32.gt_s ${get('t')} ${get('vol')}))`),
    '))',
  );
}
