/**
 * `inflightLimit`: at most `limit` requests of one key in progress at once, as Connect-style
 * middleware over an Inflight. Over the limit: 503, a short Retry-After and problem+json.
 *
 * The guard is given back exactly once, whatever ends the request: the response's `close`
 * event, which Node emits once the response is finished and also when the socket closes first
 * (client aborted, connection reset), and a handler that throws synchronously inside `next`
 * (released, then rethrown). Errors that an Express error handler or a Fastify error hook
 * answers end in a response too, so in `close`. A guard released twice gives back once.
 */

import type { IncomingMessage } from 'node:http';
import {
  Inflight,
  type InflightCounter,
  InflightGuard,
  type InflightOptions,
  integerIn,
  type Key,
} from '../core.js';
import { type KeyOf, NODE_REQUEST, type RequestAccess } from './client-key.js';
import {
  fail,
  httpOptions,
  type LimitHttpOptions,
  type Middleware,
  madeElsewhere,
} from './middleware.js';
import { type Refusal, refuse } from './responses.js';

/** What onLimit is told of a refusal: the limit, and the count the request would have made. */
export interface InflightDecision {
  /** The limit: requests of one key in progress at once. */
  limit: number;
  /** The key's requests in progress had this one been let in. */
  count: number;
}

/**
 * `inflightLimit`'s options; `Req` is the request that the functions (key, skip, onLimit)
 * receive (Node's here; Koa's context in hotcount/koa).
 */
export interface InflightLimitOptions<Req = IncomingMessage>
  extends InflightOptions,
    LimitHttpOptions<InflightDecision, Req> {
  /** Requests of one key in progress at once: an integer >= 1. */
  limit: number;
  /** Retry-After of a refusal, whole seconds. Default 1. */
  retryAfterS?: number;
}

/**
 * A rule's options with the counter made elsewhere (the proxy's fleet mode: a local-first
 * inflight shared through Redis).
 */
export type InflightRuleOptions<Req = IncomingMessage> =
  | InflightLimitOptions<Req>
  | (LimitHttpOptions<InflightDecision, Req> & {
      limit: number;
      retryAfterS?: number;
      inflight: InflightCounter;
    });

/**
 * An Inflight with its HTTP options: keys, skip, dryRun, the refusal; over the requests of one
 * framework, read through `access` (Node's IncomingMessage by default).
 */
export class InflightRule<Req = IncomingMessage> {
  readonly inflight: InflightCounter;
  readonly limit: number;
  readonly name: string;
  private readonly refusal: Refusal;
  /** Finds a request's key. */
  readonly key: KeyOf<Req>;
  private readonly skip: ((req: Req) => boolean) | undefined;
  private readonly onLimit: ((req: Req, decision: InflightDecision) => void) | undefined;
  private readonly dryRun: boolean;

  constructor(options: InflightRuleOptions<Req>, access: RequestAccess<Req>) {
    const { name, key, skip, onLimit, dryRun, rest } = httpOptions<
      InflightDecision,
      Req,
      InflightRuleOptions<Req>
    >(options, 'an object with limit', 'inflight', access);
    const { limit: limited, retryAfterS: retry, ...counted } = rest;
    this.limit = integerIn('limit', limited, 1, 0x7fffffff);
    const retryAfterS = integerIn('retryAfterS', retry ?? 1, 1, 86_400);
    this.inflight =
      'inflight' in counted
        ? madeElsewhere<InflightCounter>(
            counted,
            'inflight',
            'tryAcquire',
            'an InflightCounter (an Inflight, or a LocalFirstInflight)',
            'its own sketch',
          )
        : new Inflight(counted as InflightOptions);
    this.name = name;
    this.key = key;
    this.skip = skip;
    this.onLimit = onLimit;
    this.dryRun = dryRun;
    this.refusal = {
      status: 503,
      title: 'Service Unavailable',
      detail: `too many requests in progress for this client (limit "${name}": ${this.limit})`,
      retryAfterS,
    };
  }

  /**
   * Enters `req`: null when skipped; else the guard to give back when the request ends, or the
   * refusal to send. Throws for a key that cannot be found.
   */
  enter(req: Req): InflightGuard | Refusal | null {
    if (this.skip?.(req)) return null;
    return this.enterKey(req, this.key(req));
  }

  /** The same, for a key already found and without `skip` (for the proxy). */
  enterKey(req: Req, key: Key): InflightGuard | Refusal {
    const inflight = this.inflight;
    const guard = inflight.tryAcquire(key, this.limit);
    if (guard !== null) return guard;
    this.onLimit?.(req, { limit: this.limit, count: inflight.estimate(key) + 1 });
    // A dry run holds the request as any other: the count is what is in progress.
    return this.dryRun ? inflight.acquire(key) : this.refusal;
  }
}

/**
 * The middleware, and the counter it decides with (for status pages and tests). With
 * `inflight` (an InflightCounter, such as a LocalFirstInflight) it counts with that one,
 * which brings its own sketch.
 */
export function inflightLimit(options: InflightLimitOptions): Middleware & {
  /** The Inflight it counts with. */
  inflight: Inflight;
};
export function inflightLimit(
  options: LimitHttpOptions<InflightDecision> & {
    limit: number;
    retryAfterS?: number;
    inflight: InflightCounter;
  },
): Middleware & {
  /** The counter it was given. */
  inflight: InflightCounter;
};
export function inflightLimit(
  options: InflightRuleOptions,
): Middleware & { inflight: InflightCounter } {
  const rule = new InflightRule(options, NODE_REQUEST);
  const middleware: Middleware = (req, res, next) => {
    let entered: InflightGuard | Refusal | null;
    try {
      entered = rule.enter(req);
    } catch (error) {
      fail(res, next, error);
      return;
    }
    if (entered === null) {
      next();
      return;
    }
    if (!(entered instanceof InflightGuard)) {
      refuse(res, entered);
      return;
    }
    const guard = entered;
    res.once('close', () => guard.release());
    try {
      next();
    } catch (error) {
      guard.release();
      throw error;
    }
  };
  return Object.assign(middleware, { inflight: rule.inflight });
}
