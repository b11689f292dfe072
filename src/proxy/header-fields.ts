/**
 * The header fields a proxied message carries on, as the flat [name, value, name, value, ...]
 * arrays that node:http (`rawHeaders`, `writeHead`) and undici (`dispatch`, `onHeaders`) both
 * speak: fields pass through as received, without the object of parsed headers ever being
 * built, which was a third of the forwarding time in a profile.
 *
 * Hop-by-hop fields (RFC 9110 7.6.1: Connection and every field it names, Keep-Alive,
 * Proxy-Connection, TE, Trailer, Transfer-Encoding, Upgrade, and the Proxy- credentials) belong
 * to one connection and are dropped each way; each side's body is framed by its own
 * connection. `Expect` is dropped too: node:http has already answered 100-continue to the
 * client, and undici sends bodies without waiting for one.
 *
 * `X-Forwarded-For` gains the peer's address; `X-Forwarded-Proto` and `-Host` say what the
 * client asked for, kept from the request only when the peer is a trusted proxy (else a client
 * could claim to be anyone).
 */

/** Fields that describe one connection, not the message (lower case). */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

/** The longest name in HOP_BY_HOP and REPLACED: a longer name skips the lookups. */
const LONGEST = 19;

/** Request fields the proxy writes itself, so the client's copies are not passed on. */
const REPLACED = new Set([
  'host',
  'expect',
  'x-forwarded-for',
  'x-forwarded-proto',
  'x-forwarded-host',
]);

/** Fields of this proxy's own (the limits') that an upstream's response adds to. */
const LIST_FIELDS = new Set(['ratelimit', 'ratelimit-policy']);

/** Why a request's framing is refused before anything is forwarded (request smuggling). */
export type FramingFault = 'content-length with transfer-encoding' | 'more than one content-length';

/** What the request scan found besides the fields to send. */
export interface RequestScan {
  /** The fields for the upstream, X-Forwarded-* and Host included. */
  fields: string[];
  /** Whether the request has a body (Content-Length or Transfer-Encoding). */
  body: boolean;
  fault: FramingFault | null;
}

/**
 * The fields to send upstream for a request with `raw` (its `rawHeaders`), from `peer`, to
 * `host`; and whether its framing is one that two parsers could read differently.
 *
 * node:http's parser already refuses both framings a smuggler uses (Content-Length beside
 * Transfer-Encoding, two Content-Lengths), but under `--insecure-http-parser` (NODE_OPTIONS
 * reaches every process) it lets the first through (Node 20 still refuses the second): the
 * check here holds whatever the flags and the Node version.
 */
export function requestFields(
  raw: readonly string[],
  peer: string,
  host: string,
  trusted: boolean,
): RequestScan {
  const fields: string[] = [];
  let lengths = 0;
  let chunked = false;
  let named: string[] | null = null;
  let forwardedFor: string | null = null;
  let proto: string | null = null;
  let asked: string | null = null;
  let forwardedHost: string | null = null;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i];
    const value = raw[i + 1];
    if (name.length <= LONGEST) {
      const lower = name.toLowerCase();
      if (lower === 'content-length') lengths++;
      else if (HOP_BY_HOP.has(lower)) {
        if (lower === 'transfer-encoding') chunked = true;
        else if (lower === 'connection') named = connectionNames(value, named);
        continue;
      } else if (REPLACED.has(lower)) {
        if (lower === 'host') asked = value;
        else if (trusted) {
          if (lower === 'x-forwarded-for') {
            forwardedFor = forwardedFor === null ? value : `${forwardedFor}, ${value}`;
          } else if (lower === 'x-forwarded-proto') proto = value;
          else if (lower === 'x-forwarded-host') forwardedHost = value;
        }
        continue;
      }
    }
    fields.push(name, value);
  }
  if (named !== null) dropNamed(fields, named);
  fields.push('host', host);
  fields.push('x-forwarded-for', forwardedFor === null ? peer : `${forwardedFor}, ${peer}`);
  fields.push('x-forwarded-proto', proto ?? 'http');
  const shown = forwardedHost ?? asked;
  if (shown !== null) fields.push('x-forwarded-host', shown);
  const fault: FramingFault | null =
    lengths > 1
      ? 'more than one content-length'
      : lengths === 1 && chunked
        ? 'content-length with transfer-encoding'
        : null;
  return { fields, body: lengths > 0 || chunked, fault };
}

/**
 * The fields to send the client for an upstream response with `raw` (undici's raw Buffers, as
 * received), with `own` (the limits' RateLimit fields, flat) merged in: an upstream's own
 * RateLimit members come after the proxy's, in one field.
 */
export function responseFields(raw: readonly Buffer[], own: string[] | null): string[] {
  const fields: string[] = [];
  let named: string[] | null = null;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i].toString('latin1');
    const value = raw[i + 1].toString('latin1');
    if (name.length <= LONGEST) {
      const lower = name.toLowerCase();
      if (HOP_BY_HOP.has(lower)) {
        if (lower === 'connection') named = connectionNames(value, named);
        continue;
      }
      if (own !== null && LIST_FIELDS.has(lower)) {
        addMember(own, lower, value);
        continue;
      }
    }
    fields.push(name, value);
  }
  if (named !== null) dropNamed(fields, named);
  if (own !== null) for (let i = 0; i < own.length; i++) fields.push(own[i]);
  return fields;
}

/**
 * The headers of an upgrade's request: as `requestFields`, but Connection: Upgrade and the
 * Upgrade field are the point of the message and go on.
 */
export function upgradeFields(
  raw: readonly string[],
  peer: string,
  host: string,
  trusted: boolean,
): string[] {
  const { fields } = requestFields(raw, peer, host, trusted);
  for (let i = 0; i < raw.length; i += 2) {
    if (raw[i].toLowerCase() === 'upgrade') fields.push(raw[i], raw[i + 1]);
  }
  fields.push('connection', 'Upgrade');
  return fields;
}

/** Adds `member` to the list field `field` of `own` (flat [name, value, ...], lower-case names). */
export function addMember(own: string[], field: string, member: string): void {
  for (let i = 0; i < own.length; i += 2) {
    if (own[i] === field) {
      own[i + 1] = `${own[i + 1]}, ${member}`;
      return;
    }
  }
  own.push(field, member);
}

/** The field names a Connection field lists, beyond those already hop-by-hop. */
function connectionNames(value: string, into: string[] | null): string[] | null {
  for (const part of value.split(',')) {
    const name = part.trim().toLowerCase();
    if (name.length === 0 || HOP_BY_HOP.has(name) || name === 'close') continue;
    if (into === null) into = [];
    into.push(name);
  }
  return into;
}

/** Removes from `fields` (flat) every field whose name is in `names`. */
function dropNamed(fields: string[], names: readonly string[]): void {
  let kept = 0;
  for (let i = 0; i < fields.length; i += 2) {
    if (names.includes(fields[i].toLowerCase())) continue;
    fields[kept++] = fields[i];
    fields[kept++] = fields[i + 1];
  }
  fields.length = kept;
}
