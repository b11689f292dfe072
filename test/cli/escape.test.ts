import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { CUT_MARK, displayKey } from '../../src/cli/escape.js';

/** Reads a displayed key back into bytes, by the rules the help states. */
function undisplay(text: string): Uint8Array {
  const out: number[] = [];
  for (let i = 0; i < text.length; ) {
    if (text[i] !== '\\') {
      const code = text.codePointAt(i) as number;
      out.push(...Buffer.from(String.fromCodePoint(code)));
      i += code > 0xffff ? 2 : 1;
    } else if (text[i + 1] === '\\') {
      out.push(0x5c);
      i += 2;
    } else if (text[i + 1] === 't') {
      out.push(9);
      i += 2;
    } else if (text[i + 1] === 'x') {
      out.push(Number.parseInt(text.slice(i + 2, i + 4), 16));
      i += 4;
    } else if (text[i + 1] === 'u') {
      const close = text.indexOf('}', i);
      const code = Number.parseInt(text.slice(i + 3, close), 16);
      out.push(...Buffer.from(String.fromCodePoint(code)));
      i = close + 1;
    } else {
      throw new Error(`not an escape at ${i}: ${text}`);
    }
  }
  return Uint8Array.from(out);
}

/** What may never reach the terminal raw. */
const UNSAFE =
  /[\p{Cc}\p{Cf}\p{Default_Ignorable_Code_Point}\p{M}\p{Zl}\p{Zp}\p{Co}\p{Cn}\u2026\u00a0\u2000-\u200a\u2800\u3000]/u;

const text = fc.string({
  unit: fc.oneof(
    fc.constantFrom('a', ' ', '\\', 'x1b', '\t', '\x1b', '\u202e', '\u200b', '\u2066', '\ufeff'),
    fc.constantFrom('\u0085', '\u00a0', '\u2028', '\u00ad', '…', 'é', '日', '😀', '\ue000'),
    fc.constantFrom('\ufe0f', '\u034f', '\u180b', '\u{e0100}', '\u3164', '\u2800', 'e\u0301'),
    fc.constantFrom('\\x85', '\\u{85}', '\\t', '\\\\'),
  ),
  maxLength: 20,
});
const bytes = fc.oneof(
  text.map((s) => new Uint8Array(Buffer.from(s))),
  fc.uint8Array({ maxLength: 24 }),
);

test('a displayed key reads back to its bytes: different keys never look the same', () => {
  fc.assert(
    fc.property(bytes, (key) => {
      const { text: shown, cut } = displayKey(key, 0);
      assert.equal(cut, false);
      assert.deepEqual(undisplay(shown), key);
    }),
    { numRuns: 2000 },
  );
});

test('no control, format, bidi, separator or odd space character reaches the terminal raw', () => {
  fc.assert(
    fc.property(bytes, (key) => {
      assert.doesNotMatch(displayKey(key, 0).text, UNSAFE);
    }),
    { numRuns: 2000 },
  );
  const show = (s: string) => displayKey(new Uint8Array(Buffer.from(s)), 0).text;
  assert.equal(show('\u202eevil'), '\\u{202e}evil');
  assert.equal(show('a\u200bb'), 'a\\u{200b}b');
  assert.equal(show('\x1b[31m'), '\\x1b[31m');
  assert.equal(show('\\x1b[31m'), '\\\\x1b[31m', 'a literal backslash is doubled');
  assert.equal(show('\u0085'), '\\u{85}');
  assert.equal(displayKey(Uint8Array.of(0x85), 0).text, '\\x85', 'a stray byte is not NEL');
  assert.equal(show('日本 é'), '日本 é', 'printable text stays as it is');
  // Invisible or combining: a\uFE0F, a\u034F and a must not all show as "a".
  const shown = ['a', 'a\ufe0f', 'a\u034f', 'é', 'e\u0301', '\u3164', '\u2800'].map(show);
  assert.equal(new Set(shown).size, shown.length, shown.join(' '));
  assert.equal(show('e\u0301'), 'e\\u{301}');
});

test('a long key is cut to the width, marked with …, never inside an escape', () => {
  fc.assert(
    fc.property(bytes, fc.integer({ min: 2, max: 12 }), (key, width) => {
      const whole = displayKey(key, 0).text;
      const { text: shown, cut } = displayKey(key, width);
      const units = [...shown];
      if (!cut) {
        assert.equal(shown, whole);
        return;
      }
      assert.equal(units.at(-1), CUT_MARK);
      assert.ok(whole.startsWith(shown.slice(0, -1)), 'a prefix of the whole display');
      // The prefix is whole escapes: it reads back to a prefix of the key's bytes.
      const prefix = undisplay(shown.slice(0, -1));
      assert.deepEqual(prefix, key.subarray(0, prefix.length));
    }),
    { numRuns: 2000 },
  );
  assert.deepEqual(displayKey(new Uint8Array(Buffer.from('abcdef')), 6), {
    text: 'abcdef',
    cut: false,
  });
  assert.deepEqual(displayKey(new Uint8Array(Buffer.from('abcdefg')), 6), {
    text: 'abcde…',
    cut: true,
  });
  assert.equal(displayKey(new Uint8Array(Buffer.from('ab…')), 0).text, 'ab\\u{2026}');
});
