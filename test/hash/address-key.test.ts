import assert from 'node:assert/strict';
import { isIP } from 'node:net';
import { test } from 'node:test';
import fc from 'fast-check';
import { AddressKey, ipKey } from '../../src/hash/address-key.js';
import { KeyHasher } from '../../src/hash/key-hasher.js';
import { CountMinSketch, HeavyHitters } from '../../src/index.js';

const ipv4 = fc.integer({ min: 0, max: 2 ** 32 - 1 });
const dotted = (a: number) => `${a >>> 24}.${(a >>> 16) & 255}.${(a >>> 8) & 255}.${a & 255}`;
const ipv6 = fc.array(fc.integer({ min: 0, max: 0xffff }), { minLength: 8, maxLength: 8 });
/** Groups with long runs of zeros, so that `::` has something to compress. */
const sparseIpv6 = fc.array(fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 0xffff })), {
  minLength: 8,
  maxLength: 8,
});

/** Ways to write eight groups: full, zero-padded, upper case, `::` over a run of zeros. */
function spellings(words: number[]): string[] {
  const hex = words.map((w) => w.toString(16));
  const out = [
    hex.join(':'),
    words.map((w) => w.toString(16).padStart(4, '0')).join(':'),
    hex.join(':').toUpperCase(),
  ];
  for (let from = 0; from < 8; from++) {
    for (let to = from + 1; to <= 8; to++) {
      if (words.slice(from, to).some((w) => w !== 0)) continue;
      out.push(`${hex.slice(0, from).join(':')}::${hex.slice(to).join(':')}`);
    }
  }
  return out;
}

test('every spelling of an IPv4 address is one key: dotted, IPv4-mapped IPv6 (dotted or hex), bracketed, with a zone', () => {
  fc.assert(
    fc.property(ipv4, (a) => {
      const key = ipKey(dotted(a));
      assert.ok(key instanceof AddressKey);
      assert.equal(String(key), dotted(a));
      const hi = (a >>> 16).toString(16);
      const lo = (a & 0xffff).toString(16);
      for (const text of [
        `::ffff:${dotted(a)}`,
        `::FFFF:${dotted(a)}`,
        `0:0:0:0:0:ffff:${dotted(a)}`,
        `::ffff:${hi}:${lo}`,
        `[::ffff:${dotted(a)}]`,
        `::ffff:${hi}:${lo}%eth0`,
        `[${dotted(a)}]`,
      ]) {
        const other = ipKey(text, 64);
        assert.ok(key.equals(other), text);
        assert.equal(String(other), dotted(a));
      }
    }),
    { numRuns: 300 },
  );
});

test('every spelling of an IPv6 address is one key, for every prefix; a zone and brackets are dropped', () => {
  fc.assert(
    fc.property(fc.oneof(ipv6, sparseIpv6), fc.integer({ min: 0, max: 128 }), (words, prefix) => {
      fc.pre(!(words.slice(0, 5).every((w) => w === 0) && words[5] === 0xffff));
      const texts = spellings(words);
      const key = ipKey(texts[0], prefix);
      assert.ok(key !== null);
      for (const text of [...texts, `[${texts[0]}]`, `${texts[texts.length - 1]}%en0.1`]) {
        assert.ok(key.equals(ipKey(text, prefix)), text);
      }
      assert.match(String(key), new RegExp(`/${prefix}$`));
    }),
    { numRuns: 300 },
  );
});

test('distinct addresses never share a key; IPv6 keys are equal exactly when their prefixes are', () => {
  fc.assert(
    fc.property(ipv4, ipv4, (a, b) => {
      assert.equal(ipKey(dotted(a))?.equals(ipKey(dotted(b))), a === b);
    }),
    { numRuns: 300 },
  );
  fc.assert(
    fc.property(ipv6, ipv6, fc.integer({ min: 0, max: 128 }), (x, y, prefix) => {
      const bits = (words: number[]) =>
        words
          .map((w) => w.toString(2).padStart(16, '0'))
          .join('')
          .slice(0, prefix);
      const mapped = (w: number[]) => w.slice(0, 5).every((v) => v === 0) && w[5] === 0xffff;
      fc.pre(!mapped(x) && !mapped(y));
      const [kx, ky] = [x, y].map((w) => ipKey(w.map((v) => v.toString(16)).join(':'), prefix));
      assert.equal(kx?.equals(ky), bits(x) === bits(y));
      // Another prefix length is another key, whatever the bits.
      if (prefix < 128) assert.equal(kx?.equals(ipKey(spellings(x)[0], prefix + 1)), false);
    }),
    { numRuns: 300 },
  );
});

/** Text near addresses: their characters, shuffled and cut, and real addresses slightly off. */
const addressLike = fc.oneof(
  fc.string({ unit: fc.constantFrom(...'0123456789abcdefABCDEF:.%'.split('')), maxLength: 45 }),
  fc
    .tuple(ipv4, fc.constantFrom('', '.', '0', ':', '%', '%x', 'x', '.1'))
    .map(([a, tail]) => dotted(a) + tail),
  fc.tuple(ipv4, fc.integer({ min: 0, max: 3 })).map(([a, part]) => {
    const parts = dotted(a).split('.');
    parts[part] = `0${parts[part]}`; // a leading zero: not an address for node:net
    return parts.join('.');
  }),
  fc
    .tuple(sparseIpv6, fc.nat(), fc.constantFrom('', ':', '::', ':1', '%', '%eth0', '.1', 'g'))
    .map(([words, pick, tail]) => {
      const texts = spellings(words);
      return texts[pick % texts.length] + tail;
    }),
);

test('an address is what node:net says is one: ipKey returns a key exactly when isIP is not 0', () => {
  fc.assert(
    fc.property(addressLike, (text) => {
      assert.equal(ipKey(text) !== null, isIP(text) !== 0, JSON.stringify(text));
    }),
    { numRuns: 3000 },
  );
});

test("an address's key never takes the hash of the same address as an integer, a string or bytes", () => {
  const hasher = new KeyHasher(0x01234567, 0x089abcde);
  const hashOf = (key: Parameters<KeyHasher['hash']>[0]) => {
    hasher.hash(key);
    return `${hasher.h1}/${hasher.h2}`;
  };
  fc.assert(
    fc.property(ipv4, (a) => {
      const key = ipKey(dotted(a));
      assert.ok(key !== null);
      const own = hashOf(key);
      const bytes = Uint8Array.of(a >>> 24, (a >>> 16) & 255, (a >>> 8) & 255, a & 255);
      for (const other of [a, a | 0, dotted(a), bytes]) assert.notEqual(own, hashOf(other));
    }),
    { numRuns: 300 },
  );
});

test('keys of one address made apart count as one key in a sketch and in HeavyHitters', () => {
  const sketch = new CountMinSketch({ width: 1 << 16, depth: 4 });
  const hitters = new HeavyHitters({ k: 4 });
  for (const text of ['192.0.2.7', '::ffff:192.0.2.7', '::ffff:c000:207', '[192.0.2.7]']) {
    sketch.increment(ipKey(text) as AddressKey);
    hitters.add(ipKey(text) as AddressKey);
  }
  hitters.add('192.0.2.7'); // the string is a key of its own
  assert.equal(sketch.estimate(ipKey('192.0.2.7') as AddressKey), 4);
  const top = hitters.top();
  assert.equal(top.length, 2);
  assert.ok(top[0].key instanceof AddressKey);
  assert.equal(String(top[0].key), '192.0.2.7');
  assert.equal(top[0].count, 4);
  assert.equal(top[1].key, '192.0.2.7');
  assert.equal(top[1].count, 1);
});

test('a HeavyHitters table with address keys crosses to another thread (structured clone) and combines', () => {
  const secret = new Uint8Array(16).fill(9); // parts of one count share the secret
  const part = new HeavyHitters({ k: 4, width: 1024, secret });
  const whole = new HeavyHitters({ k: 4, width: 1024, secret });
  for (let i = 0; i < 3; i++) part.add(ipKey('2001:db8::1', 56) as AddressKey);
  whole.add(ipKey('2001:db8::2', 56) as AddressKey); // the same /56
  whole.combine(structuredClone(part.table()));
  const [top] = whole.top();
  assert.ok(top.key instanceof AddressKey);
  assert.equal(String(top.key), '2001:db8:0:0:0:0:0:0/56');
  assert.equal(top.count, 4);
  // A clone altered on its way (a bit past its prefix) is no key: a TypeError naming it.
  const altered = structuredClone(part.table());
  (altered.entries[0].key as unknown as { octets: Uint8Array }).octets[15] = 1;
  assert.throws(() => new HeavyHitters({ k: 4, width: 1024, secret }).combine(altered), {
    name: 'TypeError',
    message: /table\.entries\[0\]\.key/,
  });
});

test('bad input to ipKey: a TypeError for an address that is not a string, a RangeError for the prefix', () => {
  assert.throws(() => ipKey(42 as unknown as string), { name: 'TypeError', message: /address/ });
  assert.throws(() => ipKey('::1', 129), { name: 'RangeError', message: /ipv6Prefix/ });
  assert.throws(() => ipKey('::1', 1.5), { name: 'RangeError', message: /ipv6Prefix/ });
  assert.equal(ipKey(''), null);
  assert.equal(ipKey('not an address'), null);
});
