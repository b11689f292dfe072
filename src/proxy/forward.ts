/**
 * Forwarding one request to the upstream and its response back, on undici's Pool with the
 * `dispatch` handler interface (the controller form, `onRequestStart` to `onResponseEnd`:
 * undici 7 takes it and undici 8 takes only it): the response's fields are read as raw Buffers
 * from the controller and go out with one `writeHead`, its body chunks go to the client as they
 * come. Measured against `http.request` with a keep-alive agent and undici's `request`, bare forwarders in one run (32 connections,
 * 3 rounds): dispatch forwarded 1.5x and 1.3x as many requests per second (11.0k against 7.4k
 * and 8.7k), because it builds no header objects and no stream per response. The proxy suite
 * (bench/proxy.ts) measures them again beside the proxy.
 *
 * Each request is one `Exchange`, the handler undici calls; nothing else is allocated for it
 * but the field arrays (no closure per request: the one listener on the response is a
 * module-level function that finds its exchange on the response).
 *
 * Streaming both ways, with backpressure: the request body is undici's to read (it pauses the
 * client's socket when the upstream does not keep up); a response chunk the client does not
 * take pauses undici until the client drains. A body is never gathered.
 *
 * Failures: the upstream refuses, resets or answers what is not HTTP before its status line:
 * 502; it is silent for `timeoutMs` (no status line, or no body byte for that long): 504. Once
 * the status line has gone out a failure can only cut the response short (the client sees a
 * truncated body, never a wrong status). A client that goes away aborts the upstream request.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Dispatcher } from 'undici';
import { type Refusal, refuse } from '../http/responses.js';
import { responseFields } from './header-fields.js';
import type { Pool } from './undici.js';

export interface Upstream {
  protocol: 'http:';
  hostname: string;
  port: number;
  /** The Host field sent upstream. */
  host: string;
}

/** The code of the error an upgrade's silent upstream is destroyed with (limiting-proxy.ts). */
export const TIMED_OUT = 'ETIMEDOUT_UPSTREAM';

/** The reason an upstream request is aborted with when its client went away. */
const CLIENT_GONE = new Error('the client went away');

/** undici's codes for an upstream that stayed silent: a 504, not a 502. */
const SILENT = new Set([
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_CONNECT_TIMEOUT',
]);

/** What an upstream error answers: 504 after a silence, else 502. */
export function upstreamFailure(
  error: NodeJS.ErrnoException,
  timeoutMs: number,
): { timeout: boolean; refusal: Refusal } {
  const timeout = SILENT.has(error.code ?? '') || error.code === TIMED_OUT;
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
          detail: 'the upstream refused or reset the connection, or did not answer in HTTP',
          retryAfterS: 1,
        },
  };
}

/** How the upstream's part of an exchange ended: null for an answer in full. */
export type UpstreamEnd = 'refused' | 'timeout' | 'aborted' | null;

/** What an exchange tells the proxy, once each. */
export interface ExchangeOwner {
  /**
   * The upstream's part is over: `failure` null when it answered in full, 'aborted' when the
   * proxy cut it because the client went away (no measure of the upstream, nor its fault).
   */
  upstreamEnded(exchange: Exchange, failure: UpstreamEnd): void;
  /** The client's response is over (sent in full, cut, or the client gone). */
  responseClosed(exchange: Exchange): void;
}

const EXCHANGE = Symbol('hotcount.exchange');
type Tagged = ServerResponse & { [EXCHANGE]?: Exchange };

/** One request through the proxy: undici's handler for it, and what the proxy holds for it. */
export class Exchange {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  /** When the proxy took the request, in performance.now() milliseconds. */
  readonly startedAt: number;
  /** When the request went upstream. */
  sentAt = 0;
  /** What the proxy holds for it (its limits' guards), for `responseClosed`. */
  held: unknown;
  /** The limits' RateLimit fields (flat), merged into the response's; null without limits. */
  own: string[] | null;
  private readonly owner: ExchangeOwner;
  private readonly timeoutMs: number;
  /** undici's handle on the upstream request (abort, pause, resume), from its start. */
  private controller: Dispatcher.DispatchController | null = null;
  private upstreamOver = false;
  private gone = false;

  constructor(
    owner: ExchangeOwner,
    req: IncomingMessage,
    res: ServerResponse,
    startedAt: number,
    timeoutMs: number,
    held: unknown,
    own: string[] | null,
  ) {
    this.owner = owner;
    this.req = req;
    this.res = res;
    this.startedAt = startedAt;
    this.timeoutMs = timeoutMs;
    this.held = held;
    this.own = own;
    (res as Tagged)[EXCHANGE] = this;
    res.once('close', responseClosed);
  }

  /** Sends the request on `pool` with `fields` (header-fields.ts); `body` whether it has one. */
  send(pool: Pool, fields: string[], body: boolean): void {
    this.sentAt = performance.now();
    const req = this.req;
    try {
      pool.dispatch(
        {
          path: req.url ?? '/',
          method: req.method ?? 'GET',
          headers: fields,
          body: body ? req : null,
          headersTimeout: this.timeoutMs,
          bodyTimeout: this.timeoutMs,
        },
        this,
      );
    } catch (error) {
      // undici refused the request before sending it (as undici 8 refuses a handler of undici
      // 7's older form): a 502 now, not a client left waiting.
      this.onResponseError(null, error as NodeJS.ErrnoException);
    }
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.gone) controller.abort(CLIENT_GONE);
  }

  onResponseStart(
    controller: Dispatcher.DispatchController,
    status: number,
    _headers: unknown,
    statusText?: string,
  ): void {
    const res = this.res;
    if (res.destroyed) {
      controller.pause();
      return;
    }
    // The fields as received (raw Buffers), kept by undici on the controller beside the object
    // it parsed: names keep their case and repeated fields their order.
    const raw = controller.rawHeaders as Buffer[];
    res.writeHead(status, statusText ?? '', responseFields(raw, this.own));
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    const res = this.res;
    if (res.write(chunk)) return;
    controller.pause();
    if (!res.destroyed) res.once('drain', drained);
  }

  onResponseEnd(): void {
    this.upstreamEnded(null);
    this.res.end();
  }

  onResponseError(_controller: unknown, error: NodeJS.ErrnoException): void {
    const res = this.res;
    if (this.gone) {
      this.upstreamEnded('aborted');
      return;
    }
    const { timeout, refusal } = upstreamFailure(error, this.timeoutMs);
    this.upstreamEnded(timeout ? 'timeout' : 'refused');
    if (res.headersSent) res.destroy();
    else if (!res.destroyed) refuse(res, refusal);
  }

  private upstreamEnded(failure: UpstreamEnd): void {
    if (this.upstreamOver) return;
    this.upstreamOver = true;
    this.owner.upstreamEnded(this, failure);
  }

  /** The response closed: the owner's part, and the upstream's aborted if still running. */
  closed(): void {
    if (!this.upstreamOver) {
      this.gone = true;
      this.controller?.abort(CLIENT_GONE);
    }
    this.owner.responseClosed(this);
  }

  /** The client drained: undici may send on. */
  drained(): void {
    this.controller?.resume();
  }
}

/** The response's 'close' listener, shared by every exchange. */
function responseClosed(this: ServerResponse): void {
  (this as Tagged)[EXCHANGE]?.closed();
}

/** The response's 'drain' listener, shared by every exchange. */
function drained(this: ServerResponse): void {
  (this as Tagged)[EXCHANGE]?.drained();
}
