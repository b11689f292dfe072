/**
 * The engine's line splitter (the `hotcount top` path): a chunk of text cut at its newlines
 * and each line hashed where it lies, in one call.
 */
import { BYTES_LOCALS, HASH_LOCALS, hashBytes } from './siphash.mjs';
import { c, field, get, label, set } from './wat.mjs';

/**
 * The lines of `size` bytes from `chunk`, hashed where they lie (the `hotcount top` path; see
 * src/engine/chunk-hasher.ts): finds each newline sixteen bytes at a time (an i8x16 compare and
 * its bitmask), strips one CR before it, skips empty lines (counting them at
 * LOCAL.emptyLines), and for every other line [s, e) writes the record (s - base, e - base, h1,
 * h2) at `out`, up to `max` records. At LOCAL.consumed it leaves where the first line it did not
 * hand over starts, relative to `base`: an incomplete last line, or the first that found no
 * room. Returns the number of records. The 16 bytes past the data must be readable memory.
 */
export function hashLines() {
  const blocks = label('blocks');
  const done = label('done');
  const full = label('full');
  const newlines = label('newlines');
  const blockDone = label('blockDone');
  const stored = (offset, value) =>
    `(i32.store offset=${offset} (i32.add ${get('out')} (i32.shl ${get('n')} ${c(4)})) ${value})`;
  return `
  (func (export "hashLines") (param $chunk i32) (param $size i32) (param $base i32) (param $out i32) (param $max i32) (result i32)
      ${HASH_LOCALS} ${BYTES_LOCALS} (local $ptr i32) (local $len i32) (local $tag i32)
      (local $at i32) (local $stop i32) (local $s i32) (local $e i32) (local $bits i32) (local $nl i32) (local $n i32) (local $empty i32)
    ${set('stop', `(i32.add ${get('chunk')} ${get('size')})`)}
    ${set('s', get('chunk'))}
    ${set('at', get('chunk'))}
    (block ${full} (block ${done} (loop ${blocks}
      (br_if ${done} (i32.ge_u ${get('at')} ${get('stop')}))
      ${set('bits', `(i8x16.bitmask (i8x16.eq (v128.load align=1 ${get('at')}) (i8x16.splat ${c(10)})))`)}
      (if (i32.lt_u (i32.sub ${get('stop')} ${get('at')}) ${c(16)})
        (then ${set('bits', `(i32.and ${get('bits')} (i32.sub (i32.shl ${c(1)} (i32.sub ${get('stop')} ${get('at')})) ${c(1)}))`)}))
      (block ${blockDone} (loop ${newlines}
        (br_if ${blockDone} (i32.eqz ${get('bits')}))
        ${set('nl', `(i32.add ${get('at')} (i32.ctz ${get('bits')}))`)}
        ${set('bits', `(i32.and ${get('bits')} (i32.sub ${get('bits')} ${c(1)}))`)}
        ${set('e', get('nl'))}
        (if (i32.and (i32.gt_u ${get('e')} ${get('s')}) (i32.eq (i32.load8_u offset=0 (i32.sub ${get('e')} ${c(1)})) ${c(13)}))
          (then ${set('e', `(i32.sub ${get('e')} ${c(1)})`)}))
        (if (i32.gt_u ${get('e')} ${get('s')})
          (then
            (br_if ${full} (i32.ge_u ${get('n')} ${get('max')}))
            ${set('ptr', get('s'))}
            ${set('len', `(i32.sub ${get('e')} ${get('s')})`)}
            ${set('tag', c(0))}
            ${hashBytes()}
            ${stored(0, `(i32.sub ${get('s')} ${get('base')})`)}
            ${stored(4, `(i32.sub ${get('e')} ${get('base')})`)}
            ${stored(8, get('h1'))}
            ${stored(12, get('h2'))}
            ${set('n', `(i32.add ${get('n')} ${c(1)})`)})
          (else ${set('empty', `(i32.add ${get('empty')} ${c(1)})`)}))
        ${set('s', `(i32.add ${get('nl')} ${c(1)})`)}
        (br ${newlines})))
      ${set('at', `(i32.add ${get('at')} ${c(16)})`)}
      (br ${blocks}))))
    (i32.store ${field('consumed')} (i32.sub ${get('s')} ${get('base')}))
    (i32.store ${field('emptyLines')} ${get('empty')})
    ${get('n')})`;
}
