/**
 * The small helpers the generator writes WAT with: locals, constants, labels, the addresses of
 * a sketch's fields, and the scalar and vector forms of the operations a SipRound uses. Every
 * helper returns WAT text (an S-expression, or lines of them); nothing here knows a rule.
 */
import { LOCAL, SHARED } from './layout.mjs';

let labels = 0;
/** A fresh label `$name<n>`: one per block or loop, so that expanded code never shares one. */
export const label = (name) => `$${name}${labels++}`;
/**
 * Numbers labels from 0 again: each module starts from 0, so its text does not depend on which
 * module was generated first (labels are names only; the bytes never hold them).
 */
export function resetLabels() {
  labels = 0;
}

/** Reads local `name`. */
export const get = (name) => `(local.get $${name})`;
/** Sets local `name` to `value`. */
export const set = (name, value) => `(local.set $${name} ${value})`;
/** An i32 constant (`value` as an int32: SATURATED and -SATURATED, masks like ~3). */
export const c = (value) => `(i32.const ${value | 0})`;
/** Lines of WAT, from strings and arrays of them. */
export const lines = (...parts) => parts.flat().join('\n');

/** A load or store's address of a field of LOCAL: from the sketch's origin. */
export const field = (name) => `offset=${LOCAL[name]} (global.get $origin)`;
/** Where a local sketch's cells start (origin + LOCAL.cells), set by init. */
export const LOCAL_CELLS = '(global.get $cells)';
/** Where a shared sketch's cells start: its memory is its own. */
export const SHARED_CELLS = `(i32.const ${SHARED.cells})`;

// Scalar i32 and v128 (i32x4) forms of the operations a SipRound uses.
export const I32 = {
  add: (a, b) => `(i32.add ${a} ${b})`,
  xor: (a, b) => `(i32.xor ${a} ${b})`,
  rotl: (a, n) => `(i32.rotl ${a} (i32.const ${n}))`,
  splat: (a) => a,
};
/**
 * Byte shuffles that rotate every 32-bit lane left by 8 or 16 bits: one instruction on the
 * shuffle unit instead of two shifts and an or. Shifts were the bound of the vector hash (12
 * of a round's 26 operations, on two ports).
 */
const ROTATE_BYTES = {
  8: [3, 0, 1, 2],
  16: [2, 3, 0, 1],
};
/** Every 32-bit lane of `a` rotated left by `n` (8 or 16) bits, as one byte shuffle. */
function shuffleRotation(a, n) {
  const lanes = [0, 4, 8, 12].flatMap((base) => ROTATE_BYTES[n].map((byte) => base + byte));
  return `(i8x16.shuffle ${lanes.join(' ')} ${a} ${a})`;
}
export const X4 = {
  add: (a, b) => `(i32x4.add ${a} ${b})`,
  xor: (a, b) => `(v128.xor ${a} ${b})`,
  rotl: (a, n) =>
    n in ROTATE_BYTES
      ? shuffleRotation(a, n)
      : `(v128.or (i32x4.shl ${a} (i32.const ${n})) (i32x4.shr_u ${a} (i32.const ${32 - n})))`,
  splat: (a) => `(i32x4.splat ${a})`,
};
