/**
 * The rows of a sketch as the rules see them: where a key's cell lies in each row (the column
 * mapping of src/sketch/count-min.ts), a loop over the rows, the estimate, and the first pass
 * of a conservative update with the rows kept in locals. Over the local or the shared cells
 * alike: the caller names where the cells start and how a cell is read.
 */
import { SATURATED } from './layout.mjs';
import { c, get, label, lines, set } from './wat.mjs';

/**
 * The byte address of the key's cell in row `row` (expressions: `cells` where the cells start,
 * `off` = row * width): column
 * g = h1 + row * h2 (mod 2^32) mapped onto [0, width) as floor(g * width / 2^32). count-min.ts
 * computes it in f64, (g * width) * 2^-32 truncated, and the engine must agree for every width
 * up to 2^28. Up to width 2^21, g * width < 2^53 is exact in f64, so the exact 64-bit product's
 * high word is the same number, and it is the faster one (measured: a third of the time of a
 * row at depth 4); above, the engine runs the same f64 operations as JS, which IEEE 754 rounds
 * the same way. The choice is per sketch (global $exact), so the branch always goes one way.
 */
export function cellAddress(cells, row, off) {
  const g = `(i32.add ${get('h1')} (i32.mul ${row} ${get('h2')}))`;
  const exact = `(i32.wrap_i64 (i64.shr_u (i64.mul (i64.extend_i32_u ${g}) (global.get $width64)) (i64.const 32)))`;
  const double = `(i32.trunc_f64_u (f64.mul (f64.mul (f64.convert_i32_u ${g}) (global.get $widthF)) (f64.const 0x1p-32)))`;
  const column = `(if (result i32) (global.get $exact) (then ${exact}) (else ${double}))`;
  return `(i32.add ${cells} (i32.shl (i32.add ${off} ${column}) ${c(2)}))`;
}

/** `body` once per row, with local `a` the byte address of the key's cell in that row. */
export function forEachRow(cells, body) {
  const loop = label('rows');
  return lines(
    set('row', c(0)),
    set('off', c(0)),
    `(loop ${loop}`,
    set('a', cellAddress(cells, get('row'), get('off'))),
    body,
    set('row', `(i32.add ${get('row')} ${c(1)})`),
    set('off', `(i32.add ${get('off')} (global.get $width))`),
    `(br_if ${loop} (i32.lt_u ${get('row')} (global.get $depth))))`,
  );
}
/** The locals of a pass over the rows: forEachRow's, and those the rules keep a cell in. */
export const ROW_LOCALS =
  '(local $row i32) (local $off i32) (local $a i32) (local $v i32) (local $r i32) (local $min i32) (local $t i32)';

/**
 * name = min(name, value), branch-free: the comparison of random cells mispredicts half the
 * time.
 */
export const minInto = (name, value) =>
  set(name, `(select ${value} ${get(name)} (i32.lt_s ${value} ${get(name)}))`);
/** Whether a cell is stuck at +/-SATURATED, where it stays (counters.ts). */
export const isStuck = (value) =>
  `(i32.or (i32.eq ${value} ${c(SATURATED)}) (i32.eq ${value} ${c(-SATURATED)}))`;
/** value + delta clamped to +/-SATURATED, exact in i64 (counters.ts, saturatingSum). */
export const saturatingSum = (value, delta) =>
  `(i32.wrap_i64 (call $clamp (i64.add (i64.extend_i32_s ${value}) (i64.extend_i32_s ${delta}))))`;

/**
 * The estimate: the least of the key's cells (count-min.ts, estimateHash). Into `min`.
 */
export function estimate(cells, load) {
  return lines(
    set('min', c(SATURATED)),
    forEachRow(cells, lines(set('v', load(get('a'))), minInto('min', get('v')))),
  );
}

/** Whether the sketch has a row `row` (a constant). */
export const inDepth = (row) => `(i32.gt_u (global.get $depth) ${c(row)})`;

/**
 * How many rows a conservative update keeps in locals between its two passes (readRows): a
 * sketch up to this deep runs the rules that need them.
 */
export const ROWS_IN_LOCALS = 8;

/**
 * The first ROWS_IN_LOCALS rows' addresses into locals a0.., their values (read by `load`)
 * into s0.., and the least of them into `min`: the first pass of a conservative update.
 */
export function readRows(cells, load) {
  const rows = [...Array(ROWS_IN_LOCALS).keys()];
  return lines(
    set('min', c(SATURATED)),
    set('off', c(0)),
    rows.map((row) =>
      lines(
        `(if ${inDepth(row)} (then`,
        row === 0 ? '' : set('off', `(i32.add ${get('off')} (global.get $width))`),
        set(`a${row}`, cellAddress(cells, c(row), get('off'))),
        set(`s${row}`, load(get(`a${row}`))),
        minInto('min', get(`s${row}`)),
        '))',
      ),
    ),
  );
}
/** The locals readRows keeps the rows in: a0, s0, a1, s1... */
export const ROWS_LOCALS = [...Array(ROWS_IN_LOCALS).keys()]
  .map((row) => `(local $a${row} i32) (local $s${row} i32)`)
  .join(' ');

/** t = m + by, or SATURATED when that would reach it (count-min.ts raiseHash). */
export const target = () =>
  set(
    't',
    `(select ${c(SATURATED)} (i32.add ${get('min')} ${get('delta')}) (i32.ge_s ${get('min')} (i32.sub ${c(SATURATED)} ${get('delta')})))`,
  );

/**
 * The locals of the update rules beyond ROW_LOCALS: the magnitude of a change, the volume and
 * the total a local engine keeps in locals while a call runs, whether a cell was raised, and
 * the rows kept in locals.
 */
export const UPDATE_LOCALS = `(local $mag i32) (local $vol i32) (local $count i64) (local $raised i32) ${ROWS_LOCALS}`;
