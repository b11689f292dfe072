/**
 * Who a request is from: the key a limit counts it under.
 *
 * By default the client's IP address, from the socket. IPv6 clients are grouped by a prefix
 * (`ipv6Prefix`, default 56 bits): one subscriber usually holds a whole /56 or /64 and can pick
 * any address in it, so counting single addresses would let one client be 2^72 clients. An
 * IPv4-mapped IPv6 address (`::ffff:192.0.2.7`, what a dual-stack socket reports) is its IPv4
 * address. Behind proxies, `trustProxy: n` takes the client from `X-Forwarded-For` through n
 * trusted hops: the socket's peer is hop 0, the last address in the header hop 1, and so on,
 * so the client is the n-th address from the right (the leftmost, if the header holds fewer).
 * Without `trustProxy` the header is never read: any client can write it.
 *
 * `key: 'header:x-api-key'` counts by a request header instead (a request without it counts
 * under its client IP, prefixed so that it cannot pose as a header value), and a function of the
 * request gives any key (the seed's composite: customer + origin + host).
 */
import type { IncomingMessage } from 'node:http';
import { isIPv4, isIPv6 } from 'node:net';
import { integerIn, typeError } from '../errors.js';
import { checkKey, type Key } from '../hash/key-hasher.js';

/** How a limit finds a request's key. */
export type KeyOption = 'ip' | `header:${string}` | ((req: IncomingMessage) => Key);

export interface ClientKeyOptions {
  key?: KeyOption;
  /** Trusted proxy hops in front of this server. Default 0: X-Forwarded-For is never read. */
  trustProxy?: number;
  /** Bits of an IPv6 address that make one client. Default 56. */
  ipv6Prefix?: number;
}

/** A request's key, or throws (a key function that throws or returns a non-key). */
export type KeyOf = (req: IncomingMessage) => Key;

/** The function that finds a request's key, from validated options. */
export function keyOf(options: ClientKeyOptions): KeyOf {
  const trustProxy = integerIn('trustProxy', options.trustProxy ?? 0, 0, 64);
  const prefix = integerIn('ipv6Prefix', options.ipv6Prefix ?? 56, 1, 128);
  // Without trusted proxies the key is the socket's peer: found once per connection (a
  // keep-alive connection carries many requests), not once per request.
  const bySocket = new WeakMap<object, string>();
  const ip =
    trustProxy > 0
      ? (req: IncomingMessage) => clientAddress(req, trustProxy, prefix)
      : (req: IncomingMessage) => {
          const socket = req.socket;
          let address = bySocket.get(socket);
          if (address === undefined) {
            address = normalizeAddress(socket.remoteAddress ?? '', prefix);
            bySocket.set(socket, address);
          }
          return address;
        };
  const key = options.key ?? 'ip';
  if (typeof key === 'function') {
    return (req) => checkKey("the key function's result", key(req));
  }
  if (key === 'ip') return ip;
  if (typeof key === 'string' && /^header:[!#$%&'*+\-.^_`|~0-9a-zA-Z]+$/.test(key)) {
    const name = key.slice('header:'.length).toLowerCase();
    return (req) => {
      const value = req.headers[name];
      const first = Array.isArray(value) ? value[0] : value;
      return first === undefined || first === '' ? `ip:${ip(req)}` : `${name}:${first}`;
    };
  }
  throw typeError('key', "'ip', 'header:<name>' or a function of the request", key);
}

/** The client's address: through `trustProxy` hops of X-Forwarded-For, normalized. */
export function clientAddress(req: IncomingMessage, trustProxy: number, prefix: number): string {
  let address = req.socket.remoteAddress ?? '';
  if (trustProxy > 0) {
    const header = req.headers['x-forwarded-for'];
    const forwarded = (Array.isArray(header) ? header.join(',') : (header ?? ''))
      .split(',')
      .map((part) => part.trim())
      .filter((part) => part !== '');
    if (forwarded.length > 0) {
      address = forwarded[Math.max(0, forwarded.length - trustProxy)];
    }
  }
  return normalizeAddress(address, prefix);
}

/**
 * An address as a key: IPv4 as is, IPv4-mapped IPv6 as IPv4, IPv6 as its first `prefix` bits
 * (`2001:db8:1200::/56`); anything else (a proxy's garbage, a Unix socket's empty address)
 * as it came, so that it is still counted, under a key of its own.
 */
export function normalizeAddress(address: string, prefix: number): string {
  const bare = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  if (isIPv4(bare)) return bare;
  if (!isIPv6(bare)) return bare;
  const words = ipv6Words(bare);
  if (words === null) return bare;
  const mapped = words.slice(0, 5).every((word) => word === 0) && words[5] === 0xffff;
  if (mapped) {
    return `${words[6] >> 8}.${words[6] & 255}.${words[7] >> 8}.${words[7] & 255}`;
  }
  for (let i = 0; i < 8; i++) {
    const keep = Math.max(0, Math.min(16, prefix - 16 * i));
    words[i] &= keep === 0 ? 0 : (0xffff << (16 - keep)) & 0xffff;
  }
  return `${words.map((word) => word.toString(16)).join(':')}/${prefix}`;
}

/** The eight 16-bit words of an IPv6 address (zone dropped, `::` and dotted tail expanded). */
function ipv6Words(address: string): number[] | null {
  let text = address.split('%')[0];
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted !== null) {
    const [a, b, c, d] = dotted.slice(1).map(Number);
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const halves = text.split('::');
  if (halves.length > 2) return null;
  const head = halves[0] === '' ? [] : halves[0].split(':');
  const tail = halves.length === 2 && halves[1] !== '' ? halves[1].split(':') : [];
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 0) return null;
  const words = [...head, ...Array(halves.length === 2 ? missing : 0).fill('0'), ...tail];
  return words.map((word) => Number.parseInt(word, 16));
}
