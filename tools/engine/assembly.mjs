/**
 * The two modules, put together from the rules: `local` (counters in this thread's memory,
 * plain loads and stores, a scratch area for keys and batches) and `shared` (counters in a
 * shared memory, atomic read-modify-writes, no scratch: threads cannot share one). Each rule is
 * written once, in the files below this one, and expanded into every function that needs it,
 * so that no call sits on the hot path: one exported function per key form and rule, the
 * batches, the limits' steps, the line hasher.
 */
import { hashLines } from './hash-lines.mjs';
import { LOCAL, SATURATED, SHARED, STEP, TAG_INT32 } from './layout.mjs';
import { localAdd, localEpilogue, localPrologue, localRaise } from './local-rules.mjs';
import { estimate, ROW_LOCALS, UPDATE_LOCALS } from './rows.mjs';
import { SHARED_CONSERVATIVE_DEPTH, sharedAdd, sharedRaise, sharedTotal } from './shared-rules.mjs';
import {
  BYTES_LOCALS,
  HASH_LOCALS,
  hashBytes,
  hasher,
  hashNumber,
  NUMBER_LOCALS,
  STORE_HASH,
} from './siphash.mjs';
import { raiseWithin, windowSteps } from './steps.mjs';
import { c, get, LOCAL_CELLS, label, lines, resetLabels, SHARED_CELLS, set, X4 } from './wat.mjs';

/** One exported function per (key form, rule): number, hash, bytes. */
function entryPoints(layout, rules, bytes) {
  const LOCALS = `${HASH_LOCALS} ${ROW_LOCALS} ${UPDATE_LOCALS}`;
  const local = layout === LOCAL;
  const wrap = (body) => () => (local ? lines(localPrologue(), body(), localEpilogue()) : body());
  const store = layout === LOCAL ? STORE_HASH : '';
  const out = [];
  for (const [name, rule, result] of rules) {
    const body = wrap(rule);
    out.push(`
  (func (export "${name}Number") (param $key f64) (param $delta i32) (result i32) ${LOCALS} ${NUMBER_LOCALS}
    ${hashNumber('key')}
    ${store}
    ${body()}
    ${get(result)})
  (func (export "${name}Hash") (param $h1 i32) (param $h2 i32) (param $delta i32) (result i32) ${ROW_LOCALS} ${UPDATE_LOCALS}
    ${body()}
    ${get(result)})`);
    if (bytes) {
      out.push(`
  (func (export "${name}Bytes") (param $ptr i32) (param $len i32) (param $tag i32) (param $delta i32) (result i32) ${LOCALS} ${BYTES_LOCALS}
    ${hashBytes()}
    ${store}
    ${body()}
    ${get(result)})`);
    }
  }
  return out.join('\n');
}

/**
 * Batches of int keys (local only), in place: `n` keys from LOCAL.batch, each replaced by what
 * the single call would return for it, in order. Keys are hashed eight at a time, in i32x4 lanes;
 * each is then updated in turn, so the batch equals the loop of single calls. With `unsigned`
 * the keys are uint32: one at or above 2^31 is a number that is not an int32, hashed as a
 * double, as the single call hashes it; a group with such a key is hashed one by one.
 */
function batch(name, body, result) {
  // Two groups of four: a SipRound is a chain of dependent steps, so one group leaves the
  // vector units idle; two independent chains side by side keep them busy.
  const hashers = [hasher(X4, 'x'), hasher(X4, 'y')];
  const outer = label('outer');
  const toSingles = label('toSingles');
  const groups = label('groups');
  const singles = label('singles');
  const singlesDone = label('singlesDone');
  const both = (f) => lines(hashers.map((h, i) => f(h, 'xy'[i])));
  const one = (lane) => {
    const g = 'xy'[lane >> 2];
    return lines(
      set('h1', `(i32x4.extract_lane ${lane & 3} ${get(`${g}h1`)})`),
      set('h2', `(i32x4.extract_lane ${lane & 3} ${get(`${g}h2`)})`),
      body(),
      `(i32.store offset=${LOCAL.batch + 4 * lane} ${get('at')} ${get(result)})`,
    );
  };
  const vectors = ['v0', 'v1', 'v2', 'v3', 'm', 'hi', 'h1', 'h2'];
  const vectorLocals = ['x', 'y'].flatMap((g) => vectors.map((v) => `(local $${g}${v} v128)`));
  return `
  (func (export "${name}Many") (param $n i32) (param $delta i32) (param $unsigned i32) (result i32)
      ${HASH_LOCALS} ${ROW_LOCALS} ${UPDATE_LOCALS} ${NUMBER_LOCALS} (local $at i32) (local $stop i32) (local $key f64)
      ${vectorLocals.join(' ')}
    ;; at runs from the origin (a multiple of 64, so groups stay 32-byte aligned).
    ${set('at', '(global.get $origin)')}
    ${set('stop', `(i32.add ${get('at')} (i32.shl (i32.and ${get('n')} ${c(~7)}) ${c(2)}))`)}
    ${localPrologue()}
    (loop ${outer}
      (block ${toSingles} (loop ${groups}
        (br_if ${toSingles} (i32.ge_u ${get('at')} ${get('stop')}))
        ${set('xm', `(v128.load offset=${LOCAL.batch} ${get('at')})`)}
        ${set('ym', `(v128.load offset=${LOCAL.batch + 16} ${get('at')})`)}
        (br_if ${toSingles} (i32.and ${get('unsigned')} (i32.ne (i32x4.bitmask (v128.or ${get('xm')} ${get('ym')})) ${c(0)})))
        ${both((_, g) => set(`${g}hi`, `(i32x4.shr_s ${get(`${g}m`)} ${c(31)})`))}
        ${both((h) => h.start(c(TAG_INT32)))}
        ${both((h, g) => h.compress(get(`${g}m`)))}
        ${both((h, g) => h.compress(get(`${g}hi`)))}
        ${both((h) => h.compress(`(i32x4.splat ${c(0x08000000)})`))}
        ${both((h, g) => h.finish(`${g}h1`, `${g}h2`))}
        ${[0, 1, 2, 3, 4, 5, 6, 7].map(one).join('\n')}
        ${set('at', `(i32.add ${get('at')} ${c(32)})`)}
        (br ${groups})))
      ;; One by one: the last n mod 8 keys, and a group that holds a uint32 >= 2^31.
      (block ${singlesDone} (loop ${singles}
        (br_if ${singlesDone} (i32.ge_u ${get('at')} (i32.add (global.get $origin) (i32.shl ${get('n')} ${c(2)}))))
        ${set('lo', `(i32.load offset=${LOCAL.batch} ${get('at')})`)}
        ${set('key', `(select (f64.convert_i32_u ${get('lo')}) (f64.convert_i32_s ${get('lo')}) ${get('unsigned')})`)}
        ${hashNumber('key')}
        ${body()}
        (i32.store offset=${LOCAL.batch} ${get('at')} ${get(result)})
        ${set('at', `(i32.add ${get('at')} ${c(4)})`)}
        ;; Back to groups at the next group boundary.
        (br_if ${outer} (i32.and (i32.eqz (i32.and ${get('at')} ${c(31)})) (i32.lt_u ${get('at')} ${get('stop')})))
        (br ${singles}))))
    ${localEpilogue()}
    ${get('n')})`;
}

/** A layout's offsets as exported i32 globals `layout_<name>`, which engine.ts checks at load. */
function layoutGlobals(layout) {
  return Object.entries(layout)
    .map(([name, value]) => `  (global (export "layout_${name}") i32 (i32.const ${value}))`)
    .join('\n');
}

/** $clamp: an i64 clamped to +/-SATURATED (saturatingSum's second half). */
const CLAMP = `
  (func $clamp (param $x i64) (result i64)
    (select (i64.const ${SATURATED})
      (select (i64.const ${-SATURATED}) (local.get $x) (i64.le_s (local.get $x) (i64.const ${-SATURATED})))
      (i64.ge_s (local.get $x) (i64.const ${SATURATED}))))`;

/** The globals init sets: the hash key and the sketch's shape (see INIT_BODY). */
const KEYS = `
  (global $k0 (mut i32) (i32.const 0))
  (global $k1 (mut i32) (i32.const 0))
  (global $width (mut i32) (i32.const 1))
  (global $widthF (mut f64) (f64.const 1))
  (global $width64 (mut i64) (i64.const 1))
  (global $exact (mut i32) (i32.const 1))
  (global $depth (mut i32) (i32.const 1))`;

/**
 * What both modules' init do first: keep the key and the shape, and choose the column mapping's
 * form for this width (cellAddress, $exact).
 */
const INIT_BODY = `
    (global.set $k0 (local.get $k0))
    (global.set $k1 (local.get $k1))
    (global.set $width (local.get $width))
    (global.set $widthF (f64.convert_i32_u (local.get $width)))
    (global.set $width64 (i64.extend_i32_u (local.get $width)))
    (global.set $exact (i32.le_u (local.get $width) (i32.const ${2 ** 21})))
    (global.set $depth (local.get $depth))`;

/** The module for counters in this thread's memory. */
export function localWat() {
  resetLabels();
  const estimateBody = () => estimate(LOCAL_CELLS, (a) => `(i32.load ${a})`);
  const rules = [
    ['add', localAdd, 'min'],
    ['raise', localRaise, 't'],
    ['estimate', estimateBody, 'min'],
  ];
  return `;; Generated by tools/build-engine.mjs: edit the generator, not this text.
(module
  (import "hotcount" "memory" (memory 1))
${layoutGlobals(LOCAL)}
${layoutGlobals(Object.fromEntries(Object.entries(STEP).map(([name, value]) => [`step_${name}`, value])))}
${KEYS}
  ;; The 64-bit key of HalfSipHash as two words (hash/secret.ts, hashKeyWords) and the shape.
  ;; The sketch's origin in the memory (a multiple of 64; 0 for a memory of its own).
  (global $origin (mut i32) (i32.const 0))
  (global $cells (mut i32) (i32.const ${LOCAL.cells}))
  (func (export "init") (param $k0 i32) (param $k1 i32) (param $width i32) (param $depth i32) (param $origin i32)${INIT_BODY}
    (global.set $origin (local.get $origin))
    (global.set $cells (i32.add (local.get $origin) ${c(LOCAL.cells)})))
${CLAMP}
  ;; Hashes only, into bytes 0-7: the hasher that HeavyHitters and the tests use.
  (func (export "hashNumber") (param $key f64) ${HASH_LOCALS} ${NUMBER_LOCALS}
    ${hashNumber('key')}
    ${STORE_HASH})
  (func (export "hashBytes") (param $ptr i32) (param $len i32) (param $tag i32) ${HASH_LOCALS} ${BYTES_LOCALS}
    ${hashBytes()}
    ${STORE_HASH})
${entryPoints(LOCAL, rules, true)}
${raiseWithin(LOCAL)}
${windowSteps()}
${rules.map(([name, body, result]) => batch(name, body, result)).join('\n')}
${hashLines()}
)
`;
}

/** The module for counters in a shared memory, updated atomically. */
export function sharedWat() {
  resetLabels();
  const estimateBody = () => estimate(SHARED_CELLS, (a) => `(i32.atomic.load ${a})`);
  const rules = [
    ['add', sharedAdd, 'min'],
    ['raise', sharedRaise, 't'],
    ['estimate', estimateBody, 'min'],
  ];
  return `;; Generated by tools/build-engine.mjs: edit the generator, not this text.
(module
  (import "hotcount" "memory" (memory 1 65536 shared))
${layoutGlobals(SHARED)}
${KEYS}
  ;; The total word this instance adds to (-1: the overflow); see $addTotal.
  (global $word (mut i32) (i32.const -1))
  (global (export "conservativeDepth") i32 (i32.const ${SHARED_CONSERVATIVE_DEPTH}))
  (func (export "init") (param $k0 i32) (param $k1 i32) (param $width i32) (param $depth i32) (param $word i32)${INIT_BODY}
    (global.set $word (local.get $word)))
${CLAMP}
${sharedTotal()}
${entryPoints(SHARED, rules, false)}
${raiseWithin(SHARED)}
)
`;
}
