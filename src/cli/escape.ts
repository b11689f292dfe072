/**
 * Keys for the terminal: untrusted bytes (log lines) shown so that they can neither act on the
 * terminal nor pass for another key.
 *
 * Valid UTF-8 is shown as its characters, except those that are invisible or act on the text
 * around them: controls (C0, DEL, C1), format characters (the bidi overrides and isolates such
 * as U+202E, zero-width U+200B..U+200D, U+FEFF, soft hyphen), every other default-ignorable code
 * point (variation selectors, Hangul fillers), combining marks (so that e + U+0301 does not
 * pass for é), line and paragraph separators, spaces other than U+0020 (a no-break space looks
 * like a space) and the blank braille pattern, private-use and unassigned code points. Each is
 * escaped, as is the backslash, so every escape reads one way:
 *   \\        a backslash
 *   \t        a tab
 *   \xHH      a byte: below 80 a control character (\x1b is ESC), from 80 a byte that is not
 *             part of valid UTF-8
 *   \u{HHHH}  a code point from U+0080 (\u{85} is NEL, never the byte 85)
 * and … (U+2026) is escaped too, because a key cut short ends in one. Letters of other scripts
 * that look like Latin ones (Cyrillic а) are shown as they are: a display tells invisible and
 * composed characters apart, not homoglyphs (`--json` gives every key exactly).
 */

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The key as text, or undefined if its bytes are not valid UTF-8. */
export function keyText(key: Uint8Array): string | undefined {
  try {
    return utf8.decode(key);
  } catch {
    return undefined;
  }
}

/** Code points shown escaped (see above); U+0020 is the only space shown as itself. */
const HIDDEN =
  /[\p{Cc}\p{Cf}\p{Default_Ignorable_Code_Point}\p{M}\p{Zl}\p{Zp}\p{Co}\p{Cn}\p{Zs}\u2800\u2026\\]/u;

/** The marker of a key cut short. */
export const CUT_MARK = '…';

function hexByte(byte: number): string {
  return `\\x${byte.toString(16).padStart(2, '0')}`;
}

/** One code point as shown: itself, or its escape. */
function showCodePoint(code: number): string {
  if (code === 0x20) return ' ';
  if (code === 0x5c) return '\\\\';
  if (code === 9) return '\\t';
  const char = String.fromCodePoint(code);
  if (!HIDDEN.test(char)) return char;
  return code < 0x80 ? hexByte(code) : `\\u{${code.toString(16)}}`;
}

/**
 * The length of the valid UTF-8 sequence at bytes[i] and its code point in `decoded[0]`, or 0
 * when the byte there does not start one (overlong forms, surrogates and code points above
 * U+10FFFF are invalid, as in the WHATWG decoder).
 */
function sequenceAt(bytes: Uint8Array, i: number, decoded: Int32Array): number {
  const b0 = bytes[i];
  if (b0 < 0x80) {
    decoded[0] = b0;
    return 1;
  }
  let size: number;
  let code: number;
  let min: number;
  if (b0 >= 0xc2 && b0 <= 0xdf) {
    size = 2;
    code = b0 & 0x1f;
    min = 0x80;
  } else if (b0 >= 0xe0 && b0 <= 0xef) {
    size = 3;
    code = b0 & 0x0f;
    min = 0x800;
  } else if (b0 >= 0xf0 && b0 <= 0xf4) {
    size = 4;
    code = b0 & 0x07;
    min = 0x10000;
  } else {
    return 0;
  }
  if (i + size > bytes.length) return 0;
  for (let j = 1; j < size; j++) {
    const b = bytes[i + j];
    if ((b & 0xc0) !== 0x80) return 0;
    code = (code << 6) | (b & 0x3f);
  }
  if (code < min || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return 0;
  decoded[0] = code;
  return size;
}

/**
 * The key as shown in the table: escaped as above, and cut to `maxChars` shown characters (an
 * escape counts as one and is never split) ending in … when longer. `maxChars` 0: never cut.
 */
export function displayKey(key: Uint8Array, maxChars: number): { text: string; cut: boolean } {
  const decoded = new Int32Array(1);
  let text = '';
  let shown = 0;
  for (let i = 0; i < key.length; ) {
    const size = sequenceAt(key, i, decoded);
    const piece = size === 0 ? hexByte(key[i]) : showCodePoint(decoded[0]);
    i += size === 0 ? 1 : size;
    if (maxChars > 0 && shown === maxChars - 1 && i < key.length) {
      // One place left and more to show: the mark takes it.
      return { text: text + CUT_MARK, cut: true };
    }
    text += piece;
    shown++;
  }
  return { text, cut: false };
}
