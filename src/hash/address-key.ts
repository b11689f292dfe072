/**
 * A client's network address as a key: what `hotcount/http` counts a request under.
 *
 * An address arrives as text (`req.socket.remoteAddress`, an `X-Forwarded-For` hop), but what
 * identifies the client is its bits: 32 for IPv4, and for IPv6 the first `ipv6Prefix` of 128
 * (one subscriber holds a whole /56 or /64 and can pick any address in it). So `ipKey` reads
 * the text once, character by character, into those bits (no split, no substring, no string
 * built), and the key is hashed as those bytes under a tag of its own: TAG_IPV4, or TAG_IPV6
 * plus the prefix length. Tags are folded into the hash's initial state (see key-hasher.ts), so
 * an address never shares cells with a user's own integer, string or byte key, nor a /56 with
 * a /64. Every spelling of one address is one key: an IPv4-mapped IPv6 address
 * (`::ffff:192.0.2.7`, what a dual-stack socket reports) is its IPv4 address, a zone
 * (`fe80::1%eth0`) and brackets (`[2001:db8::1]`) are dropped, hex digits are read in either
 * case, and `::` stands for the zero groups it compresses.
 *
 * What is an address is what node:net says is one (`isIP`, tested against it): four decimal
 * parts 0-255 without leading zeros, or eight groups of one to four hex digits with at most one
 * `::` and an optional IPv4 tail. Anything else is not an address (`ipKey` returns null), and a
 * caller counts it under its text, as before.
 *
 * The key is an object, made once per connection by the middleware (it keeps a socket's key),
 * compared by value (`equals`, and HeavyHitters does), and shown as text (`toString`): IPv4
 * dotted, IPv6 as its eight groups and the prefix (`2001:db8:1200:0:0:0:0:0/56`).
 */
import { integerIn, typeError } from '../errors.js';

/** Key tags (see key-hasher.ts): an IPv4 address; an IPv6 prefix, plus its length in bits. */
export const TAG_IPV4 = 0x3400;
export const TAG_IPV6 = 0x3600;

/** The groups of an IPv6 address being parsed (one thread: parsing never re-enters). */
const groups = new Uint16Array(8);

/**
 * A client's network address as a key, made by `ipKey`: its bits, hashed under a tag of their
 * own, so that it never shares cells with an integer, string or byte key. Every spelling of
 * one address gives an equal key (`equals`).
 */
export class AddressKey {
  /** The address's bytes: 4 for IPv4, 16 for IPv6 with the bits past the prefix zero. */
  private readonly octets: Uint8Array;
  /** The hash tag: TAG_IPV4, or TAG_IPV6 + the prefix length. */
  readonly tag: number;
  private text: string | undefined = undefined;

  /** @internal Made by `ipKey`. */
  constructor(octets: Uint8Array, tag: number) {
    this.octets = octets;
    this.tag = tag;
  }

  /** @internal The bytes the hashers read (never to be written). */
  get bytes(): Uint8Array {
    return this.octets;
  }

  /** Whether `other` is the key of the same address (and, for IPv6, the same prefix). */
  equals(other: unknown): boolean {
    if (!(other instanceof AddressKey) || other.tag !== this.tag) return false;
    const a = this.octets;
    const b = other.octets;
    if (a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
    return true;
  }

  /** `192.0.2.7`, or `2001:db8:1200:0:0:0:0:0/56`: made once, then kept. */
  toString(): string {
    if (this.text === undefined) {
      const o = this.octets;
      if (this.tag === TAG_IPV4) {
        this.text = `${o[0]}.${o[1]}.${o[2]}.${o[3]}`;
      } else {
        const words: string[] = [];
        for (let i = 0; i < 16; i += 2) words.push(((o[i] << 8) | o[i + 1]).toString(16));
        this.text = `${words.join(':')}/${this.tag - TAG_IPV6}`;
      }
    }
    return this.text;
  }

  /** `toString()`, so that JSON.stringify writes the address. */
  toJSON(): string {
    return this.toString();
  }
}

/**
 * @internal `value` as an AddressKey when it is one or the structured clone of one (what
 * postMessage makes of a HeavyHitters table's keys on their way to another thread): the same
 * fields, checked as `ipKey` would have made them (4 bytes, or 16 with no bit past the prefix).
 * Anything else is returned as it is, for the caller's own check.
 */
export function revivedAddress(value: unknown): unknown {
  if (value === null || typeof value !== 'object' || value instanceof AddressKey) return value;
  const { octets, tag } = value as { octets?: unknown; tag?: unknown };
  if (!(octets instanceof Uint8Array) || typeof tag !== 'number') return value;
  if (tag === TAG_IPV4) {
    return octets.length === 4 ? new AddressKey(Uint8Array.from(octets), tag) : value;
  }
  const prefix = tag - TAG_IPV6;
  if (!Number.isInteger(prefix) || prefix < 0 || prefix > 128 || octets.length !== 16) {
    return value;
  }
  for (let bit = prefix; bit < 128; bit++) {
    if ((octets[bit >> 3] >> (7 - (bit & 7))) & 1) return value;
  }
  return new AddressKey(Uint8Array.from(octets), tag);
}

/**
 * The key of the address in `address` (IPv4, or IPv6 kept to its first `ipv6Prefix` bits,
 * default 128), or null when the text is not an address. TypeError for an address that is not
 * a string, RangeError for a prefix that is not an integer from 0 to 128.
 */
export function ipKey(address: string, ipv6Prefix = 128): AddressKey | null {
  if (typeof address !== 'string') throw typeError('address', 'a string', address);
  const prefix = integerIn('ipv6Prefix', ipv6Prefix, 0, 128);
  return addressKeyIn(address, 0, address.length, prefix);
}

/**
 * @internal `ipKey` for the characters [start, end) of `text`, the prefix already checked: an
 * `X-Forwarded-For` hop is read where it lies in the header.
 */
export function addressKeyIn(
  text: string,
  start: number,
  end: number,
  prefix: number,
): AddressKey | null {
  if (end - start >= 2 && text.charCodeAt(start) === 91 && text.charCodeAt(end - 1) === 93) {
    start++; // [2001:db8::1], as in a Host field or a URL
    end--;
  }
  const v4 = ipv4In(text, start, end);
  if (v4 >= 0) return ipv4Key(v4);
  const zone = zoneAt(text, start, end);
  if (zone === -2 || !ipv6In(text, start, zone < 0 ? end : zone)) return null;
  if (
    groups[0] === 0 &&
    groups[1] === 0 &&
    groups[2] === 0 &&
    groups[3] === 0 &&
    groups[4] === 0 &&
    groups[5] === 0xffff
  ) {
    return ipv4Key(groups[6] * 65536 + groups[7]);
  }
  const octets = new Uint8Array(16);
  for (let i = 0; i < 8; i++) {
    const keep = Math.max(0, Math.min(16, prefix - 16 * i));
    const word = keep === 0 ? 0 : groups[i] & ((0xffff << (16 - keep)) & 0xffff);
    octets[2 * i] = word >>> 8;
    octets[2 * i + 1] = word & 255;
  }
  return new AddressKey(octets, TAG_IPV6 + prefix);
}

function ipv4Key(value: number): AddressKey {
  const octets = new Uint8Array(4);
  octets[0] = value >>> 24;
  octets[1] = (value >>> 16) & 255;
  octets[2] = (value >>> 8) & 255;
  octets[3] = value & 255;
  return new AddressKey(octets, TAG_IPV4);
}

/**
 * The dotted quad in [start, end) as a uint32, or -1: four decimal parts, each 0-255 with no
 * leading zero (node:net's rule: `01.2.3.4` is not an address).
 */
function ipv4In(text: string, start: number, end: number): number {
  let value = 0;
  let part = 0;
  let digits = 0;
  let dots = 0;
  for (let i = start; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c === 46) {
      if (digits === 0 || dots === 3) return -1;
      value = value * 256 + part;
      dots++;
      part = 0;
      digits = 0;
    } else if (c >= 48 && c <= 57) {
      if (digits > 0 && part === 0) return -1;
      part = part * 10 + (c - 48);
      if (part > 255) return -1;
      digits++;
    } else {
      return -1;
    }
  }
  if (digits === 0 || dots !== 3) return -1;
  return value * 256 + part;
}

/**
 * Where a zone (`%eth0`) starts in [start, end): -1 for none, -2 for one node:net refuses
 * (empty, or a character other than letters, digits, `-`, `.` and `:`).
 */
function zoneAt(text: string, start: number, end: number): number {
  let at = -1;
  for (let i = start; i < end; i++) {
    if (text.charCodeAt(i) === 37) {
      at = i;
      break;
    }
  }
  if (at < 0) return -1;
  if (at + 1 === end) return -2;
  for (let i = at + 1; i < end; i++) {
    const c = text.charCodeAt(i);
    const letter = (c | 32) >= 97 && (c | 32) <= 122;
    if (!letter && !(c >= 48 && c <= 58) && c !== 45 && c !== 46) return -2;
  }
  return at;
}

function hexDigit(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  const lower = c | 32;
  return lower >= 97 && lower <= 102 ? lower - 87 : -1;
}

/**
 * The IPv6 address in [start, end) into `groups`, or false: groups of one to four hex digits
 * separated by `:`, at most one `::` standing for one or more zero groups, and an IPv4 tail in
 * place of the last two groups.
 */
function ipv6In(text: string, start: number, end: number): boolean {
  let n = 0; // groups read
  let gap = -1; // where `::` stands, in groups
  let i = start;
  if (i < end && text.charCodeAt(i) === 58) {
    if (i + 1 >= end || text.charCodeAt(i + 1) !== 58) return false;
    gap = 0;
    i += 2;
  }
  while (i < end) {
    let value = 0;
    let digits = 0;
    let j = i;
    for (; j < end; j++) {
      const h = hexDigit(text.charCodeAt(j));
      if (h < 0) break;
      if (++digits > 4) {
        // Five hex digits or more: an IPv4 tail's first part has at most three.
        return false;
      }
      value = value * 16 + h;
    }
    if (j < end && text.charCodeAt(j) === 46) {
      if (n > 6) return false;
      const v4 = ipv4In(text, i, end);
      if (v4 < 0) return false;
      groups[n++] = v4 >>> 16;
      groups[n++] = v4 & 0xffff;
      i = end;
      break;
    }
    if (digits === 0 || n === 8) return false;
    groups[n++] = value;
    i = j;
    if (i === end) break;
    if (text.charCodeAt(i) !== 58) return false;
    i++;
    if (i < end && text.charCodeAt(i) === 58) {
      if (gap >= 0) return false;
      gap = n;
      i++;
    } else if (i === end) {
      return false; // a lone `:` at the end
    }
  }
  if (gap < 0) return n === 8;
  if (n > 7) return false;
  const tail = n - gap;
  for (let k = 1; k <= tail; k++) groups[8 - k] = groups[n - k];
  for (let k = gap; k < 8 - tail; k++) groups[k] = 0;
  return true;
}
