/**
 * One limit of the proxy (`LimitingProxy`'s `limits`): the paths it covers, the key it counts
 * under, and its rate and inflight rules, the middleware's own (http/rate-limit.ts,
 * http/inflight-limit.ts), over sketches of its own or a limiter and counter made elsewhere
 * (a fleet's, `hotcount proxy --redis`).
 */
import type { IncomingMessage } from 'node:http';
import {
  checkOptionNames,
  type InflightCounter,
  integerIn,
  type Key,
  type LimitSketchOptions,
  type RateDecider,
  type RateLimitAlgorithm,
  rangeError,
  typeError,
} from '../core.js';
import { NODE_REQUEST } from '../http/client-key.js';
import { InflightRule } from '../http/inflight-limit.js';
import { RateLimitRule } from '../http/rate-limit.js';
import { parseRate } from './duration.js';
import { HotKeys } from './traffic.js';

/** One limit of the proxy: the paths it covers, its key, and a rate, an inflight limit or both. */
export interface ProxyLimitOptions {
  /** The limit's name, in the RateLimit fields, refusals and the status page. */
  name?: string;
  /** The paths it applies to: this prefix, on a segment boundary. Default '/', every path. */
  prefix?: string;
  /** What it counts under: 'ip' (default) or 'header:NAME'. */
  key?: 'ip' | `header:${string}`;
  /** Requests per window per key: 'N/DURATION' ('100/1m') or { limit, windowMs }. */
  rate?:
    | string
    | {
        /** Requests per window per key: an integer >= 1. */
        limit: number;
        /** The window, in milliseconds. */
        windowMs: number;
      };
  /** How the rate is decided (see RateLimiter): 'sliding-window' (default) or 'gcra'. */
  algorithm?: 'sliding-window' | 'gcra';
  /** gcra only: requests a key may make at one instant, an integer >= 1. Default the limit. */
  burst?: number;
  /** Requests in progress at once per key. */
  inflight?: number;
}

/** What a limit asks of its inflight counter (`inflightCounter`'s argument). */
export interface InflightSpec {
  /** The limit's name. */
  name: string;
  /** Requests in progress a key may have at once. */
  limit: number;
}

/** What a limit asks of its rate limiter (`rateLimiter`'s argument). */
export interface RateLimiterSpec {
  /** The limit's name. */
  name: string;
  /** Requests per window per key. */
  limit: number;
  /** The window, in milliseconds. */
  windowMs: number;
  /** The limit's algorithm, when it names one. */
  algorithm?: RateLimitAlgorithm;
  /** The limit's burst (gcra), when it gives one. */
  burst?: number;
}

/** What every limit of a proxy shares: its sketches' options and how it finds clients. */
export interface LimitShared extends Omit<LimitSketchOptions, 'shared'> {
  /** Trusted proxy hops in front of this one (see http/client-key.ts). Default 0. */
  trustProxy?: number;
  /** Bits of an IPv6 address that make one client. Default 56. */
  ipv6Prefix?: number;
}

/** What makes a limit's limiter and counter, when the proxy's own sketches should not. */
export interface LimitMakers {
  /**
   * Makes the rate limiter of each limit that has a rate, instead of a local RateLimiter: for a
   * fleet of proxies, a local-first RedisRateLimiter's `local` (see `hotcount proxy --redis`).
   */
  rateLimiter?: (limit: RateLimiterSpec) => RateDecider;
  /**
   * Makes the counter of each limit that has an inflight limit, instead of a local Inflight: for
   * a fleet of proxies, a LocalFirstInflight (see `hotcount proxy --redis`).
   */
  inflightCounter?: (limit: InflightSpec) => InflightCounter;
}

const LIMIT_NAMES = ['name', 'prefix', 'key', 'rate', 'algorithm', 'burst', 'inflight'];

/** One limit of the proxy, as it runs (a proxy's `limits`). */
export class ProxyLimit {
  /** The limit's name: as given, else 'proxy' for a lone limit, else 'limit-N' (N from 1). */
  readonly name: string;
  /** The paths it applies to: this prefix, on a segment boundary. */
  readonly prefix: string;
  /** What it counts under: 'ip', 'header:NAME', or 'function' for a key function. */
  readonly keyKind: string;
  /** @internal The rate rule, or null without a rate. */
  readonly rate: RateLimitRule | null;
  /** @internal The inflight rule, or null without an inflight limit. */
  readonly inflight: InflightRule | null;
  /** The limit's hot keys, for the status page. */
  readonly hot = new HotKeys();
  /** A request's key under this limit. May throw, as a key function may. */
  readonly key: (req: IncomingMessage) => Key;

  /**
   * @internal Made by LimitingProxy from `options`, named `at` in errors: TypeError or
   * RangeError naming `at` (or one of its fields) for options that are not valid.
   */
  constructor(
    options: ProxyLimitOptions,
    at: string,
    shared: LimitShared,
    fallbackName: string,
    makers: LimitMakers,
  ) {
    if (options === null || typeof options !== 'object') throw typeError(at, 'an object', options);
    checkOptionNames(at, options, LIMIT_NAMES);
    const { name, prefix = '/', key = 'ip', rate, algorithm, burst, inflight } = options;
    if (typeof prefix !== 'string' || !prefix.startsWith('/')) {
      throw rangeError(`${at}.prefix`, "a path starting with '/'", prefix);
    }
    if (rate === undefined && inflight === undefined) {
      throw new RangeError(`${at} must have a rate, an inflight limit or both`);
    }
    const common = { name: name ?? fallbackName, key, ...shared };
    const perWindow =
      rate === undefined ? null : typeof rate === 'string' ? parseRate(`${at}.rate`, rate) : rate;
    const how = {
      ...(algorithm === undefined ? {} : { algorithm }),
      ...(burst === undefined ? {} : { burst }),
    };
    // A limiter or counter made elsewhere brings its own sketch: only the keys are the proxy's.
    const { rateLimiter, inflightCounter } = makers;
    const keyed = {
      name: common.name,
      key,
      trustProxy: shared.trustProxy,
      ipv6Prefix: shared.ipv6Prefix,
    };
    if (perWindow === null) this.rate = null;
    else if (rateLimiter === undefined) {
      this.rate = new RateLimitRule({ ...common, ...perWindow, ...how }, NODE_REQUEST);
    } else {
      const spec = { name: common.name, ...perWindow, ...how };
      this.rate = new RateLimitRule({ ...keyed, limiter: rateLimiter(spec) }, NODE_REQUEST);
    }
    if (inflight === undefined) this.inflight = null;
    else {
      const limit = integerIn(`${at}.inflight`, inflight, 1, 0x7fffffff);
      this.inflight =
        inflightCounter === undefined
          ? new InflightRule({ ...common, limit }, NODE_REQUEST)
          : new InflightRule(
              { ...keyed, limit, inflight: inflightCounter({ name: common.name, limit }) },
              NODE_REQUEST,
            );
    }
    this.name = (this.rate?.name ?? this.inflight?.name) as string;
    this.prefix = prefix;
    this.keyKind = typeof key === 'string' ? key : 'function';
    this.key = (this.rate ?? (this.inflight as InflightRule)).key;
  }

  /** Whether `path` (a request target) is under this limit's prefix, on a segment boundary. */
  covers(path: string): boolean {
    const prefix = this.prefix;
    if (!path.startsWith(prefix)) return false;
    if (prefix.endsWith('/') || path.length === prefix.length) return true;
    const next = path.charCodeAt(prefix.length);
    return next === 0x2f || next === 0x3f; // '/' or '?'
  }

  /** Bytes of the limit's sketches: its rate limiter's and its inflight counter's. */
  get memoryBytes(): number {
    return (this.rate?.limiter.memoryBytes ?? 0) + (this.inflight?.inflight.memoryBytes ?? 0);
  }
}
