/**
 * The update rules over shared cells (the `shared` module): every cell and the total changed
 * by atomic read-modify-writes, so that threads updating one sketch at once lose no update.
 */
import { SATURATED, SHARED } from './layout.mjs';
import {
  forEachRow,
  inDepth,
  isStuck,
  minInto,
  ROWS_IN_LOCALS,
  readRows,
  saturatingSum,
  target,
} from './rows.mjs';
import { c, get, label, lines, SHARED_CELLS, set } from './wat.mjs';

/**
 * The total's words and the cache lines their claims go round, derived from the layout as
 * src/sketch/shared-counters.ts derives them: 16 words to a 64-byte line.
 */
const WORDS_PER_LINE = 16;
const TOTAL_WORDS = (SHARED.cells - SHARED.words) / 4;
const LINES = TOTAL_WORDS / WORDS_PER_LINE;

/**
 * The second pass of a shared conservative attempt (sharedRaise): each cell below t (and not
 * stuck) set from the value the first pass read, by a compare-exchange; a failed one starts the
 * attempt `attempt` over.
 */
export function casInLocals(attempt) {
  return [...Array(ROWS_IN_LOCALS).keys()].map((row) => {
    const s = get(`s${row}`);
    return lines(
      `(if (i32.and ${inDepth(row)} (i32.and (i32.lt_s ${s} ${get('t')}) (i32.ne ${s} ${c(-SATURATED)}))) (then`,
      `(br_if ${attempt} (i32.ne (i32.atomic.rmw.cmpxchg ${get(`a${row}`)} ${s} ${get('t')}) ${s}))`,
      `(if (i32.eq ${get('t')} ${c(SATURATED)}) (then (i32.atomic.store ${c(SHARED.saturated)} ${c(1)})))))`,
    );
  });
}

/**
 * The depth up to which the shared module runs the conservative rule (sharedRaise), exported
 * as the global `conservativeDepth`.
 */
export const SHARED_CONSERVATIVE_DEPTH = ROWS_IN_LOCALS;

/**
 * Plain update of shared cells (SharedCounters.add): each cell by a compare-exchange that
 * computes the saturating sum from the value it replaces, so no update is lost and no cell
 * wraps (an atomic add cannot saturate; see shared-counters.ts). Then the total.
 */
export function sharedAdd() {
  const cas = label('cas');
  return lines(
    set('min', c(SATURATED)),
    forEachRow(
      SHARED_CELLS,
      lines(
        set('v', `(i32.atomic.load ${get('a')})`),
        `(loop ${cas}`,
        set('r', get('v')),
        `(if (i32.eqz ${isStuck(get('v'))}) (then`,
        set('r', saturatingSum(get('v'), get('delta'))),
        set('t', `(i32.atomic.rmw.cmpxchg ${get('a')} ${get('v')} ${get('r')})`),
        `(if (i32.ne ${get('t')} ${get('v')}) (then ${set('v', get('t'))} (br ${cas})))`,
        `(if ${isStuck(get('r'))} (then (i32.atomic.store ${c(SHARED.saturated)} ${c(1)})))`,
        ')))',
        minInto('min', get('r')),
      ),
    ),
    `(call $addTotal ${get('delta')})`,
  );
}

/**
 * Conservative update of shared cells: count-min.ts raiseHash, whose comment holds the proof.
 * An attempt reads every cell (s_i, least m, t = m + by), then sets each cell below t by a
 * compare-exchange from s_i, and starts over if one fails; successful attempts of one key then
 * cover disjoint ranges [m, t), so no concurrent update is lost. The s_i must be the values of
 * the first pass: a second read would let an attempt raise a cell that changed since, and then
 * count again on top of it. So they are kept in locals, which bounds the depth this code runs
 * (SHARED_CONSERVATIVE_DEPTH rows); a deeper shared conservative sketch runs the JS rule.
 */
export function sharedRaise() {
  const attempt = label('attempt');
  return lines(
    `(loop ${attempt}`,
    readRows(SHARED_CELLS, (a) => `(i32.atomic.load ${a})`),
    target(),
    casInLocals(attempt),
    ')',
    `(call $addTotal ${get('delta')})`,
  );
}

/**
 * The shared total (see shared-counters.ts): this instance adds to its own Int32 word by a
 * compare-exchange that never lets the word overflow; a full word stays as it is and the
 * instance claims a fresh one from the pool (claims go round the cache lines), and once all
 * TOTAL_WORDS (1024) are taken, adds to the BigInt64 overflow. SharedCounters.addTotal is the
 * same code.
 */
export function sharedTotal() {
  const words = label('words');
  const cas = label('cas');
  const done = label('done');
  return `
  (func $addTotal (param $delta i32) (local $a i32) (local $v i32) (local $next i64) (local $seen i32) (local $claim i32)
    (block ${done} (loop ${words}
      (if (i32.lt_s (global.get $word) ${c(0)})
        (then (drop (i64.atomic.rmw.add ${c(SHARED.overflow)} (i64.extend_i32_s ${get('delta')}))) (br ${done})))
      ${set('a', `(i32.add ${c(SHARED.words)} (i32.shl (global.get $word) ${c(2)}))`)}
      ${set('v', `(i32.atomic.load ${get('a')})`)}
      (loop ${cas}
        ${set('next', `(i64.add (i64.extend_i32_s ${get('v')}) (i64.extend_i32_s ${get('delta')}))`)}
        (if (i32.or (i64.gt_s ${get('next')} (i64.const ${SATURATED})) (i64.lt_s ${get('next')} (i64.const ${-SATURATED})))
          (then
            ${set('claim', `(i32.add ${c(LINES)} (i32.atomic.rmw.add ${c(SHARED.claimed)} ${c(1)}))`)}
            (global.set $word (select
              (i32.or (i32.shl (i32.and ${get('claim')} ${c(LINES - 1)}) ${c(Math.log2(WORDS_PER_LINE))}) (i32.shr_u ${get('claim')} ${c(Math.log2(LINES))}))
              ${c(-1)}
              (i32.lt_u ${get('claim')} ${c(TOTAL_WORDS)})))
            (br ${words})))
        ${set('seen', `(i32.atomic.rmw.cmpxchg ${get('a')} ${get('v')} (i32.wrap_i64 ${get('next')}))`)}
        (br_if ${done} (i32.eq ${get('seen')} ${get('v')}))
        ${set('v', get('seen'))}
        (br ${cas}))))
  )`;
}
