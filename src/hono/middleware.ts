/**
 * The limits as Hono middleware: `rateLimit` and `inflightLimit`, the rules of hotcount/http
 * (http/rate-limit.ts, http/inflight-limit.ts) carried to Hono's context, on every runtime Hono
 * runs on: the decision, the RateLimit fields, the refusals (429 with Retry-After and
 * problem+json, 503 for requests in progress) and the client keys are those rules'; this file
 * reads the request from `c` and answers with Web-standard Responses.
 *
 * The client's address comes from what each runtime's server puts in `c.env`, as Hono's
 * `getConnInfo` helpers read it (without importing them, so that one entry point serves all):
 * @hono/node-server's `incoming` socket, Bun's server (`requestIP`), Deno's `remoteAddr`. Where
 * none is there (a test calling `app.request`, a runtime that gives none), a limit keyed by
 * address throws a TypeError that says so, which Hono answers 500: never every client counted
 * as one.
 *
 * The inflight guard is given back when the response is over. On @hono/node-server, on Node's
 * response's `close` (sent, or the client gone), as the node:http middleware does. Elsewhere, at
 * once for a response without a body, and for a body when the runtime has read it to its end
 * or cancelled it (the client went away): the body is passed through a stream of our own for
 * that, the one Web-standard hook every runtime gives.
 */
import type { ServerResponse } from 'node:http';
import type { Context, MiddlewareHandler } from 'hono';
import { type Inflight, InflightGuard, type RateLimiter } from '../core.js';
import type { RequestAccess } from '../http/client-key.js';
import { type InflightLimitOptions, InflightRule } from '../http/inflight-limit.js';
import { type RateLimitOptions, RateLimitRule } from '../http/rate-limit.js';
import { problemBody, type Refusal, setField } from '../http/responses.js';

/** Where a runtime's server left itself in `c.env`: the bindings, or a `server` field of them. */
function bindingsOf(c: Context): Record<string, unknown> | undefined {
  const env = c.env as Record<string, unknown> | undefined;
  if (env === null || typeof env !== 'object') return undefined;
  const server = env.server;
  return server !== null && typeof server === 'object' ? (server as Record<string, unknown>) : env;
}

/** The socket of @hono/node-server's request, if this is one. */
function socketOf(c: Context): { remoteAddress?: string } | undefined {
  const incoming = bindingsOf(c)?.incoming as { socket?: { remoteAddress?: string } } | undefined;
  return incoming?.socket;
}

function noAddress(): TypeError {
  return new TypeError(
    "hotcount/hono found no client address in c.env (@hono/node-server's incoming, Bun's " +
      "server, Deno's remoteAddr): serve the app with one of them, or give the limit a key",
  );
}

/** Node's response under @hono/node-server's request, if this is one. */
function outgoingOf(c: Context): ServerResponse | undefined {
  const outgoing = bindingsOf(c)?.outgoing as ServerResponse | undefined;
  return typeof outgoing?.setHeader === 'function' ? outgoing : undefined;
}

/** The peer's address as text, from whichever runtime served the request. */
function peerAddress(c: Context): string {
  const socket = socketOf(c);
  if (socket !== undefined) return socket.remoteAddress ?? '';
  const bindings = bindingsOf(c);
  if (bindings === undefined) throw noAddress();
  const requestIP = bindings.requestIP;
  if (typeof requestIP === 'function') {
    const info = requestIP.call(bindings, c.req.raw) as { address?: string } | null;
    return info?.address ?? '';
  }
  const remote = bindings.remoteAddr as { hostname?: string } | undefined;
  if (remote !== undefined && typeof remote.hostname === 'string') return remote.hostname;
  throw noAddress();
}

/** Hono's context, as the rules read it. */
const HONO_REQUEST: RequestAccess<Context> = {
  connection: socketOf,
  peerAddress,
  header: (c, name) => c.req.header(name),
};

/** `rateLimit`'s options: as hotcount/http's, with functions that receive Hono's `c`. */
export type HonoRateLimitOptions = RateLimitOptions<Context>;

/** `inflightLimit`'s options: as hotcount/http's, with functions that receive Hono's `c`. */
export type HonoInflightLimitOptions = InflightLimitOptions<Context>;

/** A list field with `member` first, before the members already there. */
function ahead(member: string, existing: string | null): string {
  return existing === null || existing === '' ? member : `${member}, ${existing}`;
}

/** A refusal as a Response: status, Retry-After, a problem+json body. */
function refusalResponse(c: Context, refusal: Refusal): Response {
  c.header('Retry-After', String(refusal.retryAfterS));
  c.header('Content-Type', 'application/problem+json');
  return c.body(problemBody(refusal), refusal.status as 429 | 503);
}

/**
 * A rate limit as Hono middleware: the RateLimit-Policy and RateLimit fields on every response
 * it counts, 429 over the limit (the handler does not run). `limiter` is the RateLimiter it
 * decides with.
 */
export function rateLimit(options: HonoRateLimitOptions): MiddlewareHandler & {
  /** The RateLimiter it decides with. */
  limiter: RateLimiter;
} {
  const rule = new RateLimitRule<Context>(options, HONO_REQUEST);
  const middleware: MiddlewareHandler = async (c, next) => {
    const decided = rule.decide(c);
    if (decided === null) return next();
    // On @hono/node-server the fields go on Node's response, as the node:http middleware puts
    // them: Node sends them with whatever response the handler makes, and a response without
    // headers of Hono's own keeps the server's fast path (measured against hono-rate-limiter:
    // 1.15x its requests/s this way, 0.98x with the fields as Hono headers).
    const outgoing = outgoingOf(c);
    if (outgoing !== undefined) {
      setField(outgoing, 'RateLimit-Policy', decided.policy);
      setField(outgoing, 'RateLimit', decided.state);
      if (decided.refusal !== null) return refusalResponse(c, decided.refusal);
      return next();
    }
    c.header('RateLimit-Policy', decided.policy, { append: true });
    c.header('RateLimit', decided.state, { append: true });
    if (decided.refusal !== null) return refusalResponse(c, decided.refusal);
    await next();
    // A handler that makes a Response of its own drops the fields set before it: then they go
    // on that response, ahead of what the limits after this one added there, so that the
    // members read in the order the limits ran. (Only then: writing to a response after the
    // handler makes Hono copy it.)
    const headers = c.res.headers;
    const state = headers.get('RateLimit');
    if (state === null || !state.includes(decided.state)) {
      c.header('RateLimit-Policy', ahead(decided.policy, headers.get('RateLimit-Policy')));
      c.header('RateLimit', ahead(decided.state, state));
    }
  };
  return Object.assign(middleware, { limiter: rule.limiter as RateLimiter });
}

/**
 * `body` passed through, with `done` called once when it has been read to its end, failed, or
 * been cancelled by its reader (the client went away).
 */
function watched(body: ReadableStream<Uint8Array>, done: () => void): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  let over = false;
  const finish = () => {
    if (over) return;
    over = true;
    done();
  };
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      let chunk: Awaited<ReturnType<typeof reader.read>>;
      try {
        chunk = await reader.read();
      } catch (error) {
        finish();
        controller.error(error);
        return;
      }
      if (over) return; // cancelled while the read was pending
      if (chunk.done) {
        finish();
        controller.close();
      } else {
        controller.enqueue(chunk.value);
      }
    },
    cancel(reason) {
      finish();
      return reader.cancel(reason);
    },
  });
}

/**
 * A limit on a key's requests in progress as Hono middleware: 503 over it. `inflight` is the
 * Inflight it counts with.
 */
export function inflightLimit(options: HonoInflightLimitOptions): MiddlewareHandler & {
  /** The Inflight it counts with. */
  inflight: Inflight;
} {
  const rule = new InflightRule<Context>(options, HONO_REQUEST);
  const middleware: MiddlewareHandler = async (c, next) => {
    const entered = rule.enter(c);
    if (entered === null) return next();
    if (!(entered instanceof InflightGuard)) return refusalResponse(c, entered);
    const release = () => entered.release();
    // On @hono/node-server the response is Node's: given back on its close, as the node:http
    // middleware does, whatever ends it (sent, the client gone), and the response untouched.
    const outgoing = outgoingOf(c);
    if (outgoing !== undefined) outgoing.once('close', release);
    try {
      await next();
    } catch (error) {
      release();
      throw error;
    }
    if (outgoing !== undefined) return;
    const response = c.res;
    if (response.body === null) {
      release();
      return;
    }
    c.res = new Response(watched(response.body, release), response);
  };
  return Object.assign(middleware, { inflight: rule.inflight as Inflight });
}
