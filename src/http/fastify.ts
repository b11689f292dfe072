/**
 * hotcount/fastify: the limits as a Fastify plugin (fastify is a peer dependency, imported for
 * its types only).
 *
 *   import hotcount from 'hotcount/fastify';
 *   await app.register(hotcount, { rate: { limit: 100, windowMs: 60_000 }, inflight: { limit: 10 } });
 *   app.get('/report', { config: { hotcount: { rate: { limit: 5, windowMs: 60_000 } } } }, handler);
 *   app.get('/health', { config: { hotcount: false } }, handler);
 *
 * Registered the Fastify way: the plugin skips encapsulation as fastify-plugin makes a plugin
 * do (the same symbols, without the dependency), so its hooks apply in the scope it is
 * registered in, and only there. An `onRequest` hook decides: the RateLimit fields on every
 * response, 429 or 503 with problem+json over a limit, sent through the reply. A route's own
 * `rate` or `inflight` replaces the plugin's for that route (each route's limiter counts on its
 * own), one it does not name keeps the plugin's, and `hotcount: false` opts the route out. The
 * inflight guard is given back on the raw response's `close`, which Node emits once the reply
 * is sent, whatever sent it (the handler, an error handler after an error hook), and when the
 * client goes away first. A key function that throws goes to Fastify's error handler (500).
 *
 * @module
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { InflightGuard, typeError } from '../core.js';
import { NODE_REQUEST } from './client-key.js';
import { type InflightLimitOptions, InflightRule } from './inflight-limit.js';
import { type RateLimitOptions, RateLimitRule } from './rate-limit.js';
import { problemBody, type Refusal, withMember } from './responses.js';

/**
 * The plugin's options, and a route's `config.hotcount`: a rate limit, an inflight limit, or
 * both. Any other name is a TypeError.
 */
export interface HotcountOptions {
  /** A rate limit (429 over it), with rateLimit's options. */
  rate?: RateLimitOptions;
  /** A limit on requests in progress (503 over it), with inflightLimit's options. */
  inflight?: InflightLimitOptions;
}

/** A route's `config.hotcount`. */
export type HotcountRouteConfig = false | HotcountOptions;

interface Rules {
  rate: RateLimitRule | null;
  inflight: InflightRule | null;
}

function rulesOf(options: unknown, name: string, defaults?: Rules): Rules {
  if (options === null || typeof options !== 'object') {
    throw typeError(name, 'an object with rate and/or inflight', options);
  }
  const { rate, inflight, ...unknown } = options as HotcountOptions;
  const extra = Object.keys(unknown);
  if (extra.length > 0) {
    throw new TypeError(`${name}.${extra[0]} is not an option; the options are rate, inflight`);
  }
  return {
    rate: rate === undefined ? (defaults?.rate ?? null) : new RateLimitRule(rate, NODE_REQUEST),
    inflight:
      inflight === undefined
        ? (defaults?.inflight ?? null)
        : new InflightRule(inflight, NODE_REQUEST),
  };
}

function send(reply: FastifyReply, refusal: Refusal): FastifyReply {
  return reply
    .code(refusal.status)
    .header('Retry-After', String(refusal.retryAfterS))
    .type('application/problem+json')
    .send(problemBody(refusal));
}

async function hotcountPlugin(app: FastifyInstance, options: HotcountOptions): Promise<void> {
  const defaults = rulesOf(options ?? {}, 'options');
  // Each route that names its own limits gets its own rules, made (and validated) when the
  // route is declared, found again by its config object, which Fastify keeps.
  const byRoute = new WeakMap<object, Rules>();
  app.addHook('onRoute', (route) => {
    const config = (route.config as { hotcount?: unknown } | undefined)?.hotcount;
    if (config === undefined || config === false) return;
    byRoute.set(config as object, rulesOf(config, `${route.url} config.hotcount`, defaults));
  });
  app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    const config = (request.routeOptions.config as { hotcount?: unknown } | undefined)?.hotcount;
    if (config === false) return;
    const rules = (config !== undefined && byRoute.get(config as object)) || defaults;
    if (rules.rate !== null) {
      const decided = rules.rate.decide(request.raw);
      if (decided !== null) {
        reply.header(
          'RateLimit-Policy',
          withMember(reply.getHeader('RateLimit-Policy'), decided.policy),
        );
        reply.header('RateLimit', withMember(reply.getHeader('RateLimit'), decided.state));
        if (decided.refusal !== null) return send(reply, decided.refusal);
      }
    }
    if (rules.inflight !== null) {
      const entered = rules.inflight.enter(request.raw);
      if (entered instanceof InflightGuard) reply.raw.once('close', () => entered.release());
      else if (entered !== null) return send(reply, entered);
    }
  });
}

// What fastify-plugin sets: no encapsulation (the hooks apply where the plugin is registered),
// a name, and the Fastify versions it runs on.
/**
 * The plugin: `app.register(hotcount, { rate, inflight })`. Its options are checked when it is
 * registered, a route's `config.hotcount` when the route is declared (TypeError or RangeError
 * naming the option).
 */
const plugin: (app: FastifyInstance, options: HotcountOptions) => Promise<void> = Object.assign(
  hotcountPlugin,
  {
    [Symbol.for('skip-override')]: true,
    [Symbol.for('fastify.display-name')]: 'hotcount',
    [Symbol.for('plugin-meta')]: { name: 'hotcount', fastify: '>=5' },
  },
);

export { plugin as hotcount };
export default plugin;
export {
  FastifyRateLimitStore,
  type FastifyStoreCallback,
  type FastifyStoreOptions,
  type FastifyStoreParams,
} from './fastify-rate-limit-store.js';
