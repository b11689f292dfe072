/**
 * The order `HeavyHitters.top()` breaks ties by, so that the same counts give the same list
 * whatever order the keys were met in (threads, pieces, table slots): as `sort` would order
 * lines, a key's bytes ascending. Kinds first (numbers, bigints, strings, bytes, addresses),
 * then within a kind: numbers by value, strings by their UTF-8 bytes, bytes by their bytes,
 * addresses by their text's bytes.
 */
import { AddressKey } from '../hash/address-key.js';
import type { Key } from '../hash/key-hasher.js';

function kindOf(key: Key): number {
  if (typeof key === 'number') return 0;
  if (typeof key === 'bigint') return 1;
  if (typeof key === 'string') return 2;
  return key instanceof AddressKey ? 4 : 3;
}

function bytesOf(key: Key): Uint8Array {
  return key instanceof Uint8Array ? key : Buffer.from(String(key), 'utf8');
}

/** Negative when `a` comes before `b`, 0 for equal keys, positive after. */
export function compareKeys(a: Key, b: Key): number {
  const kind = kindOf(a) - kindOf(b);
  if (kind !== 0) return kind;
  if (typeof a === 'number' || typeof a === 'bigint') {
    return a < (b as number | bigint) ? -1 : a > (b as number | bigint) ? 1 : 0;
  }
  return Buffer.compare(bytesOf(a), bytesOf(b));
}
