import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { compareKeys } from '../../src/heavy-hitters/key-order.js';
import { HeavyHitters, ipKey, type Key } from '../../src/index.js';

const utf8 = (text: string) => new TextEncoder().encode(text);

test('keys order as sort orders lines: strings and bytes by their bytes, numbers by value, kinds apart', () => {
  fc.assert(
    fc.property(fc.array(fc.string({ unit: 'binary' }), { maxLength: 30 }), (strings) => {
      const byKey = [...strings].sort(compareKeys);
      const byBytes = [...strings].sort((a, b) => Buffer.compare(utf8(a), utf8(b)));
      assert.deepEqual(byKey, byBytes);
    }),
  );
  // UTF-16 puts U+1F600 (a surrogate pair, D83D...) before U+FF01; its UTF-8 bytes (F0...)
  // come after FF01's (EF...), and so does sort's order.
  assert.deepEqual(['\u{1F600}', '\uFF01'].sort(compareKeys), ['\uFF01', '\u{1F600}']);
  assert.deepEqual(['key-10', 'key-2', 'key-1'].sort(compareKeys), ['key-1', 'key-10', 'key-2']);
  assert.deepEqual([10, -1, 2.5, 2].sort(compareKeys), [-1, 2, 2.5, 10]);
  assert.deepEqual([10n, -3n, 2n].sort(compareKeys), [-3n, 2n, 10n]);
  // Equal contents are one key, whichever object holds them.
  assert.equal(compareKeys(Uint8Array.of(1, 2), Uint8Array.of(1, 2)), 0);
  assert.ok(compareKeys(Uint8Array.of(1, 2), Uint8Array.of(1, 2, 0)) < 0);
  const address = ipKey('10.0.0.2') as Key;
  assert.equal(compareKeys(address, ipKey('10.0.0.2') as Key), 0);
  assert.ok(compareKeys(ipKey('10.0.0.10') as Key, address) < 0, 'addresses by their text');
  // Kinds never interleave: numbers, bigints, strings, bytes, addresses.
  const kinds: Key[] = [address, Uint8Array.of(0), 'a', 1n, 1];
  assert.deepEqual([...kinds].sort(compareKeys), [1, 1n, 'a', Uint8Array.of(0), address]);
});

test('top() lists tied keys in key order, whatever order they were counted in', () => {
  const keys = ['b', 'a', 'c10', 'c9', 'é', 'z', 'A'];
  fc.assert(
    fc.property(
      fc.shuffledSubarray(keys, { minLength: keys.length }),
      fc.integer({ min: 1, max: 5 }),
      (order, times) => {
        const hitters = new HeavyHitters({ k: keys.length + 1 });
        for (let i = 0; i < times; i++) for (const key of order) hitters.add(key);
        hitters.add('heavy', times + 1);
        const listed = hitters.top().map((row) => row.key);
        assert.deepEqual(listed, ['heavy', 'A', 'a', 'b', 'c10', 'c9', 'z', 'é']);
      },
    ),
  );
});
