/**
 * Forwarding one request to the upstream and its response back, streamed both ways: bodies are
 * piped chunk by chunk, never gathered, so a proxy of a large upload or a long
 * download holds one chunk at a time and the upstream's backpressure reaches the client.
 *
 * Headers: the hop-by-hop ones (RFC 9110 7.6.1: Connection and every field it names,
 * Keep-Alive, Proxy-Connection, TE, Trailer, Transfer-Encoding, Upgrade, and the Proxy-
 * credentials) belong to one connection and are dropped each way; Node frames each side's body
 * itself. `X-Forwarded-For` gains the peer's address; `X-Forwarded-Proto` and `-Host` say what
 * the client asked for, kept from the request only when the peer is a trusted proxy.
 *
 * Failures: the upstream refuses or resets before answering: 502; it is silent for `timeoutMs`
 * (no response, or no byte of it): 504. Once the status line is sent a failure can only cut the
 * response short (the client sees a truncated body, never a wrong status). A client that goes
 * away aborts the upstream request.
 */
import {
  type Agent,
  type ClientRequest,
  type IncomingMessage,
  request,
  type ServerResponse,
} from 'node:http';
import { type Refusal, refuse, withMember } from '../http/responses.js';

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

/** Fields of this proxy's own that the upstream's response adds to rather than replaces. */
const LIST_FIELDS = new Set(['ratelimit', 'ratelimit-policy']);

export interface Upstream {
  protocol: 'http:';
  hostname: string;
  port: number;
  /** The Host field sent upstream. */
  host: string;
}

export type ForwardOutcome = 'ok' | 'refused' | 'timeout' | 'aborted';

const TIMED_OUT = 'ETIMEDOUT_UPSTREAM';

/** Ends an upstream request silent for `timeoutMs` with an error `upstreamFailure` knows. */
export function giveUpAfter(outgoing: ClientRequest, timeoutMs: number): void {
  outgoing.setTimeout(timeoutMs, () => {
    outgoing.destroy(Object.assign(new Error('upstream timeout'), { code: TIMED_OUT }));
  });
}

/** What an upstream request's error answers: 504 after a silence (giveUpAfter), else 502. */
export function upstreamFailure(
  error: NodeJS.ErrnoException,
  timeoutMs: number,
): { timeout: boolean; refusal: Refusal } {
  const timeout = error.code === TIMED_OUT;
  return {
    timeout,
    refusal: timeout
      ? {
          status: 504,
          title: 'Gateway Timeout',
          detail: `the upstream did not answer within ${timeoutMs} ms`,
          retryAfterS: 1,
        }
      : {
          status: 502,
          title: 'Bad Gateway',
          detail: 'the upstream refused or reset the connection',
          retryAfterS: 1,
        },
  };
}

/** `headers` without the hop-by-hop fields (those named by its Connection field included). */
export function endToEnd(
  headers: IncomingMessage['headers'],
  keep: ReadonlySet<string> = HOP_BY_HOP_NONE,
): Record<string, string | string[]> {
  const named = new Set<string>();
  const connection = headers.connection;
  if (connection !== undefined) {
    for (const name of String(connection).split(',')) named.add(name.trim().toLowerCase());
  }
  const out: Record<string, string | string[]> = {};
  for (const name in headers) {
    const value = headers[name];
    if (value === undefined) continue;
    if ((HOP_BY_HOP.has(name) || named.has(name)) && !keep.has(name)) continue;
    out[name] = value;
  }
  return out;
}
const HOP_BY_HOP_NONE: ReadonlySet<string> = new Set();

/** The headers sent upstream for `req` (see the top comment). */
export function upstreamHeaders(
  req: IncomingMessage,
  upstream: Upstream,
  trusted: boolean,
  keep?: ReadonlySet<string>,
): Record<string, string | string[]> {
  const headers = endToEnd(req.headers, keep);
  const peer = req.socket.remoteAddress ?? '';
  const forwarded = trusted ? req.headers['x-forwarded-for'] : undefined;
  headers['x-forwarded-for'] = forwarded === undefined ? peer : `${forwarded}, ${peer}`;
  const proto = trusted ? req.headers['x-forwarded-proto'] : undefined;
  headers['x-forwarded-proto'] = typeof proto === 'string' ? proto : 'http';
  const host = trusted ? req.headers['x-forwarded-host'] : undefined;
  const asked = typeof host === 'string' ? host : req.headers.host;
  if (asked === undefined) delete headers['x-forwarded-host'];
  else headers['x-forwarded-host'] = asked;
  headers.host = upstream.host;
  return headers;
}

/**
 * Sends `req` to the upstream and its response to `res`; `done` is called once, with how it
 * ended, when both are over.
 */
export function forward(
  req: IncomingMessage,
  res: ServerResponse,
  upstream: Upstream,
  agent: Agent,
  timeoutMs: number,
  trusted: boolean,
  done: (outcome: ForwardOutcome) => void,
): void {
  let ended = false;
  const end = (outcome: ForwardOutcome) => {
    if (ended) return;
    ended = true;
    done(outcome);
  };
  const outgoing = request({
    protocol: upstream.protocol,
    hostname: upstream.hostname,
    port: upstream.port,
    method: req.method,
    path: req.url,
    headers: upstreamHeaders(req, upstream, trusted),
    agent,
  });
  giveUpAfter(outgoing, timeoutMs);
  outgoing.on('error', (error: NodeJS.ErrnoException) => {
    if (res.headersSent) {
      res.destroy();
      end('refused');
      return;
    }
    const { timeout, refusal } = upstreamFailure(error, timeoutMs);
    if (!res.destroyed) refuse(res, refusal);
    end(timeout ? 'timeout' : 'refused');
  });
  outgoing.on('response', (incoming) => {
    const headers = endToEnd(incoming.headers);
    for (const name in headers) {
      const value = headers[name];
      res.setHeader(
        name,
        LIST_FIELDS.has(name) ? withMember(res.getHeader(name), String(value)) : value,
      );
    }
    res.writeHead(incoming.statusCode ?? 502, incoming.statusMessage);
    // `pipe`, not `pipeline`: the latter makes an AbortSignal per call, 7% of the proxy's time
    // in a profile. A response cut by the upstream cuts the client's (never ends it cleanly);
    // a client gone destroys the upstream request ('close' below).
    incoming.pipe(res);
    incoming.once('error', () => res.destroy());
    incoming.once('aborted', () => res.destroy());
    res.once('finish', () => end('ok'));
  });
  // Not `pipeline` this way: it would destroy `req`, and with it the socket that a 502 must
  // still go out on. A request body the upstream no longer reads is drained instead.
  req.pipe(outgoing);
  req.on('error', () => outgoing.destroy());
  outgoing.once('error', () => {
    req.unpipe(outgoing);
    req.resume();
  });
  res.once('close', () => {
    if (!res.writableFinished) {
      outgoing.destroy();
      end('aborted');
    }
  });
}
