/**
 * hotcount/proxy: the limiting reverse proxy as a library (the `hotcount proxy` command runs
 * it): `new LimitingProxy({ upstream, limits })`, then `proxy.server.listen(...)`, and
 * `createAdminServer(proxy)` for the status page.
 *
 * @module
 */
export { createAdminServer } from './admin.js';
export { createDemoUpstream } from './demo-upstream.js';
export { parseDuration, parseRate } from './duration.js';
export { BUCKETS_S, type DurationHistogram } from './histogram.js';
export { LATENCY_ACCURACY, type Latency, type LatencySummary } from './latency.js';
export { LimitingProxy, type ProxyOptions, type ServerOptionName } from './limiting-proxy.js';
export { METRICS_CONTENT_TYPE, metricsText } from './metrics.js';
export {
  type InflightSpec,
  type LimitMakers,
  type LimitShared,
  ProxyLimit,
  type ProxyLimitOptions,
  type RateLimiterSpec,
} from './proxy-limit.js';
export { type LimitStatus, type ProxyStatus, statusOf } from './status.js';
export type { HotKeys, Outcome, SecondCounts, Traffic } from './traffic.js';
