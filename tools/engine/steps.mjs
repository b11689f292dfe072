/**
 * What the limits call (src/limits): the conservative rule with a floor and a ceiling, which
 * tests and admits in one call (raiseWithin), and a limit's whole window step over two
 * sketches (windowSteps).
 */
import { LOCAL, STEP } from './layout.mjs';
import { localEpilogue, localPrologue, raiseInLocals } from './local-rules.mjs';
import { estimate, ROW_LOCALS, readRows, target, UPDATE_LOCALS } from './rows.mjs';
import { casInLocals } from './shared-rules.mjs';
import {
  BYTES_LOCALS,
  HASH_LOCALS,
  hashBytes,
  hashNumber,
  NUMBER_LOCALS,
  STORE_HASH,
} from './siphash.mjs';
import { c, get, LOCAL_CELLS, label, lines, SHARED_CELLS, set } from './wat.mjs';

/**
 * The conservative rule with a floor and a ceiling (count-min.ts raiseWithin), by hash, over
 * locals floor, delta, ceiling: the limits' admission test and update in one call.
 * base = max(estimate, floor), t = base + by (saturating); the cells are raised to t only when
 * t <= ceiling; t (in local `t`) either way. Up to ROWS_IN_LOCALS rows (WITHIN_DEPTH); a deeper
 * sketch runs the JS rule. Local: one pass of reads, then the branch-free raise of localRaise.
 * Shared: sharedRaise's attempts, each deciding on its own reads, so that an admission made on
 * a read another thread made stale is retried, never granted twice.
 */
function withinBody(layout) {
  const local = layout === LOCAL;
  const load = (a) => (local ? `(i32.load ${a})` : `(i32.atomic.load ${a})`);
  const decide = lines(
    readRows(local ? LOCAL_CELLS : SHARED_CELLS, load),
    set('min', `(select ${get('floor')} ${get('min')} (i32.gt_s ${get('floor')} ${get('min')}))`),
    target(),
  );
  if (local) {
    return lines(
      localPrologue(),
      decide,
      `(if (i32.le_s ${get('t')} ${get('ceiling')}) (then`,
      raiseInLocals(),
      set('count', `(i64.add ${get('count')} (i64.extend_i32_s ${get('delta')}))`),
      '))',
      localEpilogue(),
    );
  }
  const attempt = label('attempt');
  const done = label('done');
  return lines(
    `(block ${done} (loop ${attempt}`,
    decide,
    `(br_if ${done} (i32.gt_s ${get('t')} ${get('ceiling')}))`,
    casInLocals(attempt),
    `(call $addTotal ${get('delta')})))`,
  );
}

/** The export `raiseWithin` of the module for `layout` (LOCAL or SHARED): withinBody by hash. */
export function raiseWithin(layout) {
  return `
  (func (export "raiseWithin") (param $h1 i32) (param $h2 i32) (param $floor i32) (param $delta i32) (param $ceiling i32) (result i32) ${ROW_LOCALS} ${UPDATE_LOCALS}
    ${withinBody(layout)}
    ${get('t')})`;
}

/**
 * A limit's step over two sketches of one memory (src/limits/window-step.ts, byHash, is the
 * reference), its rule read from the slots at byte `step` (STEP): the key's estimate p in the
 * other sketch (whose cells start at byte `other`; p = 0 for other < 0), lo = max(floor, p +
 * previousFloorOffset) and the ceiling floor(limit - p * previousWeight), in the same doubles
 * as the JS; p and the ceiling written back to the slots `previous` and `ceiling`. Then, on this
 * sketch, with add 0 max(estimate, lo), writing nothing; else raiseWithin(lo, add, ceiling).
 * One call where the limits made three (hash, the previous window's estimate, the test and
 * raise). Local engines, up to ROWS_IN_LOCALS rows; each key form hashes its own way first.
 */
export function windowSteps() {
  const params = '(param $other i32) (param $step i32) (result i32)';
  const locals = `${ROW_LOCALS} ${UPDATE_LOCALS} (local $p i32) (local $floor i32) (local $ceiling i32) (local $delta i32)`;
  const slot = (name) => `(f64.load offset=${STEP[name]} ${get('step')})`;
  const p = `(f64.convert_i32_s ${get('p')})`;
  const body = lines(
    set('p', c(0)),
    `(if (i32.ge_s ${get('other')} ${c(0)}) (then`,
    estimate(get('other'), (a) => `(i32.load ${a})`),
    set('p', get('min')),
    '))',
    set(
      'floor',
      `(i32.trunc_sat_f64_s (f64.max ${slot('floor')} (f64.add ${p} ${slot('previousFloorOffset')})))`,
    ),
    set(
      'ceiling',
      `(i32.trunc_sat_f64_s (f64.floor (f64.sub ${slot('limit')} (f64.mul ${p} ${slot('previousWeight')}))))`,
    ),
    set('delta', `(i32.trunc_sat_f64_s ${slot('add')})`),
    `(f64.store offset=${STEP.previous} ${get('step')} ${p})`,
    `(f64.store offset=${STEP.ceiling} ${get('step')} (f64.convert_i32_s ${get('ceiling')}))`,
    `(if (i32.eqz ${get('delta')}) (then`,
    estimate(LOCAL_CELLS, (a) => `(i32.load ${a})`),
    set('t', `(select ${get('floor')} ${get('min')} (i32.gt_s ${get('floor')} ${get('min')}))`),
    ') (else',
    withinBody(LOCAL),
    '))',
    get('t'),
  );
  return `
  (func (export "stepNumber") (param $key f64) ${params} ${HASH_LOCALS} ${locals} ${NUMBER_LOCALS}
    ${hashNumber('key')}
    ${STORE_HASH}
    ${body})
  (func (export "stepBytes") (param $ptr i32) (param $len i32) (param $tag i32) ${params} ${HASH_LOCALS} ${locals} ${BYTES_LOCALS}
    ${hashBytes()}
    ${STORE_HASH}
    ${body})
  (func (export "stepHash") (param $h1 i32) (param $h2 i32) ${params} ${locals}
    ${body})`;
}
