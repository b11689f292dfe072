/**
 * HalfSipHash-1-3 in WAT, the hash of src/hash/key-hasher.ts bit for bit: the hasher over a
 * state in locals (one key in i32 locals, or four keys at once in i32x4 lanes), and what the
 * engine's entry points hash with it: a number (hashNumber) and bytes (hashBytes).
 */
import { TAG_FLOAT, TAG_INT32 } from './layout.mjs';
import { c, get, I32, label, lines, set } from './wat.mjs';

/**
 * HalfSipHash-1-3 (Aumasson & Bernstein) over locals named p+'v0'..p+'v3' with the operations
 * `ops` (I32 for one key, X4 for four keys at once).
 */
export function hasher(ops, p) {
  const v = (i) => get(`${p}v${i}`);
  const to = (i, value) => set(`${p}v${i}`, value);
  const round = () =>
    lines(
      to(0, ops.add(v(0), v(1))),
      to(1, ops.rotl(v(1), 5)),
      to(1, ops.xor(v(1), v(0))),
      to(0, ops.rotl(v(0), 16)),
      to(2, ops.add(v(2), v(3))),
      to(3, ops.rotl(v(3), 8)),
      to(3, ops.xor(v(3), v(2))),
      to(0, ops.add(v(0), v(3))),
      to(3, ops.rotl(v(3), 7)),
      to(3, ops.xor(v(3), v(0))),
      to(2, ops.add(v(2), v(1))),
      to(1, ops.rotl(v(1), 13)),
      to(1, ops.xor(v(1), v(2))),
      to(2, ops.rotl(v(2), 16)),
    );
  return {
    /** The initial state for a key tagged `tag` (an i32 expression), keyed by $k0, $k1. */
    start: (tag) =>
      lines(
        to(0, ops.splat('(global.get $k0)')),
        to(1, ops.splat(`(i32.xor (i32.xor (global.get $k1) ${c(0xee)}) ${tag})`)),
        to(2, ops.splat(`(i32.xor (global.get $k0) ${c(0x6c796765)})`)),
        to(3, ops.splat(`(i32.xor (global.get $k1) ${c(0x74656462)})`)),
      ),
    /** One compression (one round) of the message word `m` (an expression without effects). */
    compress: (m) => lines(to(3, ops.xor(v(3), m)), round(), to(0, ops.xor(v(0), m))),
    /** Finalization, 3 rounds per output word; the 64-bit result into locals `h1`, `h2`. */
    finish: (h1, h2) =>
      lines(
        to(2, ops.xor(v(2), ops.splat(c(0xee)))),
        round(),
        round(),
        round(),
        set(h1, ops.xor(v(1), v(3))),
        to(1, ops.xor(v(1), ops.splat(c(0xdd)))),
        round(),
        round(),
        round(),
        set(h2, ops.xor(v(1), v(3))),
      ),
  };
}

const scalar = hasher(I32, '');
/** A local engine leaves the last hash at its origin (bytes 0-7). */
export const STORE_HASH = `(i32.store offset=0 (global.get $origin) ${get('h1')}) (i32.store offset=4 (global.get $origin) ${get('h2')})`;
/** The locals of the scalar hasher's state and its result. */
export const HASH_LOCALS =
  '(local $v0 i32) (local $v1 i32) (local $v2 i32) (local $v3 i32) (local $h1 i32) (local $h2 i32)';

/**
 * A number `key` (f64 local): a 32-bit integer as its two's complement sign-extended to 8 bytes
 * under TAG_INT32, any other finite number as its IEEE-754 bytes under TAG_FLOAT: the same two
 * words and length block as KeyHasher.hashNumber. -0 is the integer 0 there too.
 */
export function hashNumber(key) {
  const isInt = `(f64.eq (f64.convert_i32_s (i32.trunc_sat_f64_s ${get(key)})) ${get(key)})`;
  return lines(
    `(if ${isInt}`,
    `  (then ${set('lo', `(i32.trunc_sat_f64_s ${get(key)})`)} ${set('hi', `(i32.shr_s ${get('lo')} ${c(31)})`)} ${set('tag', c(TAG_INT32))})`,
    `  (else ${set('bits', `(i64.reinterpret_f64 ${get(key)})`)}`,
    `    ${set('lo', `(i32.wrap_i64 ${get('bits')})`)} ${set('hi', `(i32.wrap_i64 (i64.shr_u ${get('bits')} (i64.const 32)))`)} ${set('tag', c(TAG_FLOAT))}))`,
    hashWords(get('tag')),
  );
}
/** The locals hashNumber uses beyond HASH_LOCALS. */
export const NUMBER_LOCALS = '(local $lo i32) (local $hi i32) (local $tag i32) (local $bits i64)';

/** Two message words in locals lo, hi (a number's 8 bytes), then the length block of 8. */
function hashWords(tag) {
  return lines(
    scalar.start(tag),
    scalar.compress(get('lo')),
    scalar.compress(get('hi')),
    scalar.compress(c(0x08000000)),
    scalar.finish('h1', 'h2'),
  );
}

/** `len` bytes from `ptr` under `tag`, as KeyHasher.hashBytes (4 bytes per word, LE). */
export function hashBytes() {
  const loop = label('words');
  const done = label('done');
  return lines(
    scalar.start(get('tag')),
    set('end', `(i32.add ${get('ptr')} (i32.and ${get('len')} ${c(~3)}))`),
    `(block ${done} (loop ${loop}`,
    `  (br_if ${done} (i32.ge_u ${get('ptr')} ${get('end')}))`,
    `  ${set('m', `(i32.load align=1 ${get('ptr')})`)}`,
    scalar.compress(get('m')),
    `  ${set('ptr', `(i32.add ${get('ptr')} ${c(4)})`)}`,
    `  (br ${loop})))`,
    ';; Length block: the length mod 256 in the top byte, the 0-3 bytes left below it.',
    set('rest', `(i32.and ${get('len')} ${c(3)})`),
    set('m', `(i32.shl ${get('len')} ${c(24)})`),
    `(if (i32.gt_u ${get('rest')} ${c(0)}) (then ${set('m', `(i32.or ${get('m')} (i32.load8_u ${get('ptr')}))`)}))`,
    `(if (i32.gt_u ${get('rest')} ${c(1)}) (then ${set('m', `(i32.or ${get('m')} (i32.shl (i32.load8_u offset=1 ${get('ptr')}) ${c(8)}))`)}))`,
    `(if (i32.gt_u ${get('rest')} ${c(2)}) (then ${set('m', `(i32.or ${get('m')} (i32.shl (i32.load8_u offset=2 ${get('ptr')}) ${c(16)}))`)}))`,
    scalar.compress(get('m')),
    scalar.finish('h1', 'h2'),
  );
}
/** The locals hashBytes uses beyond HASH_LOCALS and its inputs (ptr, len, tag). */
export const BYTES_LOCALS = '(local $m i32) (local $end i32) (local $rest i32)';
