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
import { integerIn } from '../errors.js';
import { Inflight, type InflightOptions } from '../index.js';
import { fail, httpOptions, type LimitHttpOptions, type Middleware } from './middleware.js';
import { refuse } from './responses.js';

/** What onLimit is told of a refusal: the limit, and the count the request would have made. */
export interface InflightDecision {
  limit: number;
  count: number;
}

export interface InflightLimitOptions extends InflightOptions, LimitHttpOptions<InflightDecision> {
  /** Requests of one key in progress at once: an integer >= 1. */
  limit: number;
  /** Retry-After of a refusal, whole seconds. Default 1. */
  retryAfterS?: number;
}

export function inflightLimit(options: InflightLimitOptions): Middleware & { inflight: Inflight } {
  const { name, key, skip, onLimit, dryRun, rest } = httpOptions<
    InflightDecision,
    InflightLimitOptions
  >(options, 'an object with limit', 'inflight');
  const { limit: limited, retryAfterS: retry, ...sketchOptions } = rest;
  const limit = integerIn('limit', limited, 1, 0x7fffffff);
  const retryAfterS = integerIn('retryAfterS', retry ?? 1, 1, 86_400);
  const inflight = new Inflight(sketchOptions);

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
