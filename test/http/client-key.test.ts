import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { test } from 'node:test';
import { keyOf as keyWith, NODE_REQUEST } from '../../src/http/client-key.js';
import { type ClientKeyOptions, type KeyOption, normalizeAddress } from '../../src/http/index.js';
import { AddressKey, ipKey } from '../../src/index.js';

/** A key finder over Node's requests, as the node:http middleware makes it. */
const keyOf = (options: ClientKeyOptions) => keyWith(options, NODE_REQUEST);

function request(remoteAddress: string, headers: Record<string, string | string[]> = {}) {
  return { socket: { remoteAddress }, headers } as unknown as IncomingMessage;
}

test('IPv6 clients are grouped by their prefix; IPv4-mapped IPv6 is IPv4', () => {
  assert.equal(normalizeAddress('192.0.2.7', 56), '192.0.2.7');
  assert.equal(normalizeAddress('::ffff:192.0.2.7', 56), '192.0.2.7');
  assert.equal(normalizeAddress('::ffff:c000:207', 56), '192.0.2.7');
  assert.equal(normalizeAddress('2001:db8:1234:5678::1', 56), '2001:db8:1234:5600:0:0:0:0/56');
  assert.equal(normalizeAddress('2001:db8:1234:56ff:aaaa::9', 56), '2001:db8:1234:5600:0:0:0:0/56');
  assert.equal(normalizeAddress('2001:db8:1234:5678::1', 64), '2001:db8:1234:5678:0:0:0:0/64');
  assert.equal(normalizeAddress('fe80::1%eth0', 128), 'fe80:0:0:0:0:0:0:1/128');
  assert.equal(normalizeAddress('[2001:db8::1]', 48), '2001:db8:0:0:0:0:0:0/48');
  assert.equal(normalizeAddress('not an address', 56), 'not an address');
});

test('X-Forwarded-For is read only through trustProxy hops, never otherwise', () => {
  const headers = { 'x-forwarded-for': '203.0.113.9, 198.51.100.1, 10.0.0.2' };
  const at = (trustProxy: number) => String(keyOf({ trustProxy })(request('10.0.0.1', headers)));
  assert.equal(at(0), '10.0.0.1'); // a client can write the header: not trusted
  assert.equal(at(1), '10.0.0.2');
  assert.equal(at(2), '198.51.100.1');
  assert.equal(at(3), '203.0.113.9');
  assert.equal(at(9), '203.0.113.9'); // fewer hops than trusted: the furthest
  assert.equal(String(keyOf({ trustProxy: 1 })(request('10.0.0.1'))), '10.0.0.1');
  const split = { 'x-forwarded-for': ['203.0.113.9', '2001:db8::7'] };
  assert.equal(String(keyOf({ trustProxy: 1 })(request('::1', split))), '2001:db8:0:0:0:0:0:0/56');
  // Empty items and white space around them are skipped, as a list field's OWS.
  const spaced = { 'x-forwarded-for': ' 203.0.113.9 ,, \t198.51.100.1\t, ' };
  assert.equal(String(keyOf({ trustProxy: 1 })(request('10.0.0.1', spaced))), '198.51.100.1');
  assert.equal(String(keyOf({ trustProxy: 2 })(request('10.0.0.1', spaced))), '203.0.113.9');
});

test('a client address is an AddressKey, one per address whatever its spelling; other text stays text', () => {
  const ip = keyOf({});
  const key = ip(request('::ffff:192.0.2.7'));
  assert.ok(key instanceof AddressKey);
  assert.ok(key.equals(ip(request('192.0.2.7'))));
  assert.ok(key.equals(ipKey('192.0.2.7')));
  assert.equal(ip(request('')), '');
  assert.equal(ip(request('[not an address]')), 'not an address');
  const behind = keyOf({ trustProxy: 1 });
  const forwarded = behind(request('10.0.0.1', { 'x-forwarded-for': 'garbage' }));
  assert.equal(forwarded, 'garbage');
});

test('header keys, with the client IP when the header is missing; key functions are checked', () => {
  const byHeader = keyOf({ key: 'header:X-Api-Key' });
  assert.equal(byHeader(request('192.0.2.1', { 'x-api-key': 'abc' })), 'x-api-key:abc');
  assert.equal(byHeader(request('192.0.2.1')), 'ip:192.0.2.1');
  const composite = keyOf({ key: (req) => `${req.headers['x-customer']}|${req.headers.host}` });
  assert.equal(composite(request('192.0.2.1', { 'x-customer': 'c1', host: 'h' })), 'c1|h');
  const bad = keyOf({ key: (() => ({})) as unknown as KeyOption });
  assert.throws(() => bad(request('192.0.2.1')), { name: 'TypeError', message: /key function/ });
});

test('bad key options are refused at construction, naming the option', () => {
  assert.throws(() => keyOf({ key: 'cookie:x' as never }), { name: 'TypeError', message: /key/ });
  assert.throws(() => keyOf({ key: 'header:' as never }), { name: 'TypeError', message: /key/ });
  assert.throws(() => keyOf({ trustProxy: -1 }), { name: 'RangeError', message: /trustProxy/ });
  assert.throws(() => keyOf({ trustProxy: true as never }), {
    name: 'TypeError',
    message: /trustProxy/,
  });
  assert.throws(() => keyOf({ ipv6Prefix: 129 }), { name: 'RangeError', message: /ipv6Prefix/ });
});
