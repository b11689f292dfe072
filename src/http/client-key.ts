/**
 * Who a request is from: the key a limit counts it under.
 *
 * By default the client's IP address, from the socket, as an AddressKey (`ipKey`: its bits,
 * parsed in place and hashed under a tag of their own, never a string built per request). IPv6
 * clients are grouped by a prefix (`ipv6Prefix`, default 56 bits): one subscriber usually holds
 * a whole /56 or /64 and can pick any address in it, so counting single addresses would let one
 * client be 2^72 clients. An IPv4-mapped IPv6 address (`::ffff:192.0.2.7`, what a dual-stack
 * socket reports) is its IPv4 address. Text that is no address (a Unix socket's empty address)
 * is counted under that text. Behind proxies, `trustProxy: n` takes the client from
 * `X-Forwarded-For` (read where it lies, hop by hop from the right) through n
 * trusted hops: the socket's peer is hop 0, the last address in the header hop 1, and so on,
 * so the client is the n-th address from the right (the leftmost, if the header holds fewer).
 * Without `trustProxy` the header is never read: any client can write it.
 *
 * `key: 'header:x-api-key'` counts by a request header instead (a request without it counts
 * under its client IP, prefixed so that it cannot pose as a header value), and a function of the
 * request gives any key (the seed's composite: customer + origin + host).
 */
import type { IncomingMessage } from 'node:http';
import { addressKeyIn, checkKey, integerIn, type Key, typeError } from '../core.js';

/**
 * What the rules read of a request, whatever the framework's request is: Node's IncomingMessage
 * (node:http, Express, Fastify, Koa's ctx.req, the proxy) or a framework's own (Hono's context).
 */
export interface RequestAccess<Req> {
  /** The connection the request came on, whose peer's key is found once; undefined if unknown. */
  connection(req: Req): object | undefined;
  /** The peer's address as text ('' when the runtime gives none). */
  peerAddress(req: Req): string;
  /** A header's value (lines of one name joined by ", "), undefined when absent. */
  header(req: Req, name: string): string | undefined;
}

/** Node's IncomingMessage, as the rules read it. */
export const NODE_REQUEST: RequestAccess<IncomingMessage> = {
  connection: (req) => req.socket,
  peerAddress: (req) => req.socket.remoteAddress ?? '',
  header: (req, name) => {
    const value = req.headers[name];
    return Array.isArray(value) ? value.join(', ') : value;
  },
};

/** How a limit finds a request's key. */
export type KeyOption<Req = IncomingMessage> = 'ip' | `header:${string}` | ((req: Req) => Key);

/** How a limit keys its requests: by client address (default), by a header, or by a function. */
export interface ClientKeyOptions<Req = IncomingMessage> {
  /**
   * How a request's key is found: 'ip' (the client's address; default), 'header:<name>', or a
   * function of the request that returns a key.
   */
  key?: KeyOption<Req>;
  /** Trusted proxy hops in front of this server. Default 0: X-Forwarded-For is never read. */
  trustProxy?: number;
  /** Bits of an IPv6 address that make one client. Default 56. */
  ipv6Prefix?: number;
}

/** A request's key, or throws (a key function that throws or returns a non-key). */
export type KeyOf<Req = IncomingMessage> = (req: Req) => Key;

/** The function that finds a request's key, from validated options, reading `access`. */
export function keyOf<Req>(options: ClientKeyOptions<Req>, access: RequestAccess<Req>): KeyOf<Req> {
  const trustProxy = integerIn('trustProxy', options.trustProxy ?? 0, 0, 64);
  const prefix = integerIn('ipv6Prefix', options.ipv6Prefix ?? 56, 1, 128);
  const peer = (req: Req) => {
    const address = access.peerAddress(req);
    return addressOrText(address, 0, address.length, prefix);
  };
  // Without trusted proxies the key is the socket's peer: found once per connection (a
  // keep-alive connection carries many requests), not once per request.
  const byConnection = new WeakMap<object, Key>();
  const ip =
    trustProxy > 0
      ? (req: Req) =>
          forwardedKey(access.header(req, 'x-forwarded-for') ?? '', trustProxy, prefix) ?? peer(req)
      : (req: Req) => {
          const connection = access.connection(req);
          if (connection === undefined) return peer(req);
          let key = byConnection.get(connection);
          if (key === undefined) {
            key = peer(req);
            byConnection.set(connection, key);
          }
          return key;
        };
  const key = options.key ?? 'ip';
  if (typeof key === 'function') {
    return (req) => checkKey("the key function's result", key(req));
  }
  if (key === 'ip') return ip;
  if (typeof key === 'string' && /^header:[!#$%&'*+\-.^_`|~0-9a-zA-Z]+$/.test(key)) {
    const name = key.slice('header:'.length).toLowerCase();
    return (req) => {
      const value = access.header(req, name);
      return value === undefined || value === '' ? `ip:${ip(req)}` : `${name}:${value}`;
    };
  }
  throw typeError('key', "'ip', 'header:<name>' or a function of the request", key);
}

/** SP or HTAB: the white space around a field's list items (RFC 9110, OWS). */
function isSpace(c: number): boolean {
  return c === 32 || c === 9;
}

/**
 * The client's key through `trustProxy` hops of X-Forwarded-For (the trustProxy-th address from
 * the right, or the leftmost when the header holds fewer; empty items skipped); undefined when
 * the header names none, and the socket's peer is the client. The header is scanned where it
 * lies: no split, no array, no substring.
 */
function forwardedKey(text: string, trustProxy: number, prefix: number): Key | undefined {
  let from = -1;
  let to = -1;
  let found = 0;
  for (let end = text.length; found < trustProxy; ) {
    let start = end;
    while (start > 0 && text.charCodeAt(start - 1) !== 44) start--;
    let a = start;
    let b = end;
    while (a < b && isSpace(text.charCodeAt(a))) a++;
    while (b > a && isSpace(text.charCodeAt(b - 1))) b--;
    if (b > a) {
      from = a;
      to = b;
      found++;
    }
    if (start === 0) break;
    end = start - 1;
  }
  return from >= 0 ? addressOrText(text, from, to, prefix) : undefined;
}

/**
 * The key of the address in text[start, end): an AddressKey, or, for text that is no address (a
 * proxy's garbage, a Unix socket's empty address), that text without brackets, so that it is
 * still counted, under a key of its own.
 */
function addressOrText(text: string, start: number, end: number, prefix: number): Key {
  const key = addressKeyIn(text, start, end, prefix);
  if (key !== null) return key;
  const bracketed = end - start >= 2 && text[start] === '[' && text[end - 1] === ']';
  return bracketed ? text.slice(start + 1, end - 1) : text.slice(start, end);
}

/**
 * An address as text, as it is counted: IPv4 as is, IPv4-mapped IPv6 as IPv4, IPv6 as its first
 * `prefix` bits (`2001:db8:1200:0:0:0:0:0/56`); anything else as it came (without brackets).
 * The text of the key `ipKey(address, prefix)`.
 */
export function normalizeAddress(address: string, prefix: number): string {
  return String(addressOrText(address, 0, address.length, prefix));
}
