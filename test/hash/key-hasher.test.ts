import assert from 'node:assert/strict';
import { test } from 'node:test';
import { KeyHasher } from '../../src/hash/key-hasher.js';
import { hashKeyWords, randomSecret } from '../../src/hash/secret.js';

/**
 * HalfSipHash-1-3 with 64-bit output, key 00 01 .. 07, message 00 01 .. (len - 1), for
 * len = 0..17: outputs of the reference C implementation (veorq/SipHash halfsiphash.c) built
 * with cROUNDS=1 dROUNDS=3; that build reproduces the published HalfSipHash-2-4 vectors.
 */
const VECTORS = [
  '76a5d0212320f72a',
  '87e8748d6fd33397',
  '78ee1fe15d3cd732',
  '3e5239a36bde6c3e',
  'eb24dba0718cae05',
  '83e7464ecbc3bde6',
  'af65e0c64df5d602',
  '3c052d0ab24cf18f',
  '3dcda8311dec7a5f',
  'bd615fbfc1433bf6',
  '3134fba809e041f2',
  'cd3daa72c20b76fb',
  '5577cc5cb3e73f93',
  '6d177cca97c22544',
  '7da915ca92ec826b',
  '165bdfa626a2729a',
  '56d7c5b93d3e2ec2',
  '58ec4c13d6ac3a30',
];

function hex(hasher: KeyHasher): string {
  const out = Buffer.alloc(8);
  out.writeInt32LE(hasher.h1, 0);
  out.writeInt32LE(hasher.h2, 4);
  return out.toString('hex');
}

function hashOf(hasher: KeyHasher, key: Parameters<KeyHasher['hash']>[0]): string {
  hasher.hash(key);
  return hex(hasher);
}

test('byte keys are exactly HalfSipHash-1-3 (reference vectors)', () => {
  const hasher = new KeyHasher(0x03020100, 0x07060504);
  const message = Uint8Array.from({ length: VECTORS.length }, (_, i) => i);
  VECTORS.forEach((expected, len) => {
    assert.equal(hashOf(hasher, message.subarray(0, len)), expected, `length ${len}`);
  });
});

test('a byte key is its content, wherever it sits in memory', () => {
  const hasher = new KeyHasher(1, 2);
  const content = Buffer.from('customer-42 /api/v1/orders');
  const copy = new Uint8Array(content);
  const backing = Buffer.alloc(content.length + 3);
  content.copy(backing, 3);
  const atOddOffset = backing.subarray(3);
  const expected = hashOf(hasher, content);
  assert.equal(hashOf(hasher, copy), expected);
  assert.equal(hashOf(hasher, atOddOffset), expected);
  hasher.hashBytes(backing, 3, backing.length);
  assert.equal(hex(hasher), expected);
});

test('keys are type-tagged: 1, 1n, "1" and the byte "1" are four keys', () => {
  const hasher = new KeyHasher(5, 6);
  const hashes = [1, 1n, '1', Buffer.from('1')].map((key) => hashOf(hasher, key));
  assert.equal(new Set(hashes).size, 4);
});

test('-0 is 0, and equal values hash equally', () => {
  const hasher = new KeyHasher(7, 8);
  assert.equal(hashOf(hasher, -0), hashOf(hasher, 0));
  assert.equal(hashOf(hasher, 2 ** 40 + 0.5), hashOf(hasher, 2 ** 40 + 0.5));
  assert.equal(hashOf(hasher, 'abc'), hashOf(hasher, ['a', 'b', 'c'].join('')));
  assert.equal(
    hashOf(hasher, 123456789012345678901234567890n),
    hashOf(hasher, 10n ** 29n * 1n + 23456789012345678901234567890n),
  );
  assert.notEqual(hashOf(hasher, 1n), hashOf(hasher, -1n));
});

test('strings of every length and odd code units hash consistently and distinctly', () => {
  const hasher = new KeyHasher(9, 10);
  const seen = new Set<string>();
  let s = '';
  for (let i = 0; i < 300; i++) {
    s += String.fromCharCode(0xd800 + (i % 7)); // lone surrogates are code units like any other
    const h = hashOf(hasher, s);
    assert.ok(!seen.has(h), `length ${s.length} collided`);
    seen.add(h);
  }
});

test('refuses keys that are not keys, with a TypeError naming key', () => {
  const hasher = new KeyHasher(1, 1);
  for (const bad of [
    Number.NaN,
    Number.POSITIVE_INFINITY,
    Number.NEGATIVE_INFINITY,
    undefined,
    null,
    {},
    [],
    true,
    Symbol('s'),
    () => 1,
    new Uint16Array(2),
    new ArrayBuffer(4),
  ]) {
    assert.throws(
      () => hasher.hash(bad as never),
      (error: unknown) => error instanceof TypeError && /key/.test(error.message),
    );
  }
});

test('the secret matters: keys that collide under one secret collide under another only by chance', () => {
  // Cells of a width-1024 row: under secret A, find every key among 200k that lands in the same
  // cell as the target (about 195 of them). An attacker who knew A could use exactly those keys to
  // inflate the target. Under an independent secret B, each of them lands on the target's cell
  // with probability 1/1024, so we expect about 0.19 of them; 6 or more has probability ~1e-7.
  const width = 1024;
  const column = (hasher: KeyHasher, key: string): number => {
    hasher.hash(key);
    return Math.floor(((hasher.h1 >>> 0) * width) / 2 ** 32);
  };
  const a = new KeyHasher(...hashKeyWords(randomSecret()));
  const b = new KeyHasher(...hashKeyWords(randomSecret()));
  const target = 'innocent-customer';
  const colliders: string[] = [];
  for (let i = 0; i < 200_000; i++) {
    const key = `attacker-${i}`;
    if (column(a, key) === column(a, target)) colliders.push(key);
  }
  assert.ok(colliders.length > 120, `expected ~195 colliders under A, found ${colliders.length}`);
  const stillColliding = colliders.filter((key) => column(b, key) === column(b, target)).length;
  assert.ok(stillColliding <= 5, `${stillColliding} of ${colliders.length} still collide under B`);
});
