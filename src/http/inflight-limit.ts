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
import { integerIn, typeError } from '../errors.js';
import { Inflight, type InflightOptions } from '../index.js';
import { type ClientKeyOptions, keyOf } from './client-key.js';
import { checkBoolean, checkFunction, fail, type Middleware } from './middleware.js';
import { checkName, refuse } from './responses.js';

export interface InflightLimitOptions extends InflightOptions, ClientKeyOptions {
  /** Requests of one key in progress at once: an integer >= 1. */
  limit: number;
  /** The limit's name, in the refusal. Default "inflight". */
  name?: string;
  /** Retry-After of a refusal, whole seconds. Default 1. */
  retryAfterS?: number;
  skip?: (req: IncomingMessage) => boolean;
  /** Count, but never refuse. Default false. */
  dryRun?: boolean;
  /** Called on each refusal (also in dryRun), with the key's count, before the response. */
  onLimit?: (req: IncomingMessage, decision: { limit: number; count: number }) => void;
}

export function inflightLimit(options: InflightLimitOptions): Middleware & { inflight: Inflight } {
  if (options === null || typeof options !== 'object') {
    throw typeError('options', 'an object with limit', options);
  }
  // What is not HTTP's goes to the Inflight, which refuses names it does not know.
  const {
    limit: limited,
    name: named,
    retryAfterS: retry,
    key: keyed,
    trustProxy,
    ipv6Prefix,
    skip: skipped,
    dryRun: dry,
    onLimit: onLimited,
    ...sketchOptions
  } = options;
  const limit = integerIn('limit', limited, 1, 0x7fffffff);
  const retryAfterS = integerIn('retryAfterS', retry ?? 1, 1, 86_400);
  const inflight = new Inflight(sketchOptions);
  const name = checkName(named, 'inflight');
  const key = keyOf({ key: keyed, trustProxy, ipv6Prefix });
  const skip = checkFunction('skip', skipped);
  const onLimit = checkFunction('onLimit', onLimited);
  const dryRun = checkBoolean('dryRun', dry);

  const middleware: Middleware = (req, res, next) => {
    let requestKey: ReturnType<typeof key>;
    try {
      if (skip?.(req)) {
        next();
        return;
      }
      requestKey = key(req);
    } catch (error) {
      fail(res, next, error);
      return;
    }
    // Held while the request runs, dry run or not: the count is what is in progress.
    let guard = inflight.tryAcquire(requestKey, limit);
    if (guard === null) {
      onLimit?.(req, { limit, count: inflight.estimate(requestKey) + 1 });
      if (!dryRun) {
        refuse(
          res,
          503,
          'Service Unavailable',
          `too many requests in progress for this client (limit "${name}": ${limit})`,
          retryAfterS,
        );
        return;
      }
      guard = inflight.acquire(requestKey);
    }
    const held = guard;
    res.once('close', () => held.release());
    try {
      next();
    } catch (error) {
      held.release();
      throw error;
    }
  };
  return Object.assign(middleware, { inflight });
}
