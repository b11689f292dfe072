/**
 * What the middleware of this folder share: the Connect-style signature Express uses as is and
 * node:http calls by hand, and the path of an error.
 *
 * An error (a key function that throws, or returns something that is not a key) goes to the
 * framework's error path: `next(error)`, where Express answers 500 through its error handlers.
 * A `next` that takes no argument cannot receive it (node:http's `() => handler(req, res)`):
 * then the middleware answers 500 itself and does not call `next`, so that the request never
 * passes unlimited because its key could not be found.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { typeError } from '../core.js';
import { type ClientKeyOptions, keyOf, type RequestAccess } from './client-key.js';
import { checkName, refuse } from './responses.js';

/** Connect's `next`: called with nothing to go on, with an error to hand it on. */
export type Next = (error?: unknown) => void;
/** Connect-style middleware, as node:http servers and Express call it. */
export type Middleware = (req: IncomingMessage, res: ServerResponse, next: Next) => void;

/** The error path (see the top comment). */
export function fail(res: ServerResponse, next: Next, error: unknown): void {
  if (next.length >= 1) {
    next(error);
    return;
  }
  const detail = error instanceof Error ? error.message : String(error);
  refuse(res, {
    status: 500,
    title: 'Internal Server Error',
    detail: `hotcount could not key this request: ${detail}`,
    retryAfterS: 1,
  });
}

/** Validates the hooks every limit takes. */
export function checkFunction<T>(name: string, value: T | undefined): T | undefined {
  if (value !== undefined && typeof value !== 'function') {
    throw new TypeError(`${name} must be a function; received ${typeof value}`);
  }
  return value;
}

export function checkBoolean(name: string, value: unknown): boolean {
  if (value === undefined) return false;
  if (typeof value !== 'boolean')
    throw new TypeError(`${name} must be a boolean; received ${typeof value}`);
  return value;
}

/**
 * A limit's `option` given something made elsewhere (a fleet's local-first limiter or counter)
 * instead of its own options: checked to be an object with `method`, alone (it brings its own
 * sketch, so no sketch option may come beside it). `rest` is the limit's options less the HTTP
 * ones and those the rule keeps.
 */
export function madeElsewhere<T>(
  rest: Record<string, unknown>,
  option: string,
  method: string,
  kind: string,
  brings: string,
): T {
  const { [option]: made, ...others } = rest;
  if (
    made === null ||
    typeof made !== 'object' ||
    typeof (made as Record<string, unknown>)[method] !== 'function'
  ) {
    throw new TypeError(`${option} must be ${kind}; received ${String(made)}`);
  }
  const extra = Object.keys(others);
  if (extra.length > 0) {
    throw new RangeError(
      `${option} brings ${brings}: ${extra.join(', ')} cannot be given beside it`,
    );
  }
  return made as T;
}

/**
 * The options every limit's middleware takes, beside its limit's own; `Req` is the request its
 * functions receive (Node's IncomingMessage here, the framework's own in hotcount/hono and koa).
 */
export interface LimitHttpOptions<Decision, Req = IncomingMessage> extends ClientKeyOptions<Req> {
  /** The limit's name, in the fields and refusals. */
  name?: string;
  /** Requests for which this returns true pass uncounted. */
  skip?: (req: Req) => boolean;
  /** Count (and send the fields) but never refuse. Default false. */
  dryRun?: boolean;
  /** Called on each refusal (also in dryRun), before the response. */
  onLimit?: (req: Req, decision: Decision) => void;
}

/**
 * The HTTP options of `options`, validated, and the rest, for the limit itself (which refuses
 * names it does not know).
 */
export function httpOptions<Decision, Req, T extends LimitHttpOptions<Decision, Req>>(
  options: T,
  what: string,
  fallbackName: string,
  access: RequestAccess<Req>,
) {
  if (options === null || typeof options !== 'object') throw typeError('options', what, options);
  const { name, key, trustProxy, ipv6Prefix, skip, dryRun, onLimit, ...rest } = options;
  return {
    name: checkName(name, fallbackName),
    key: keyOf<Req>({ key, trustProxy, ipv6Prefix }, access),
    skip: checkFunction('skip', skip),
    onLimit: checkFunction('onLimit', onLimit),
    dryRun: checkBoolean('dryRun', dryRun),
    rest,
  };
}
