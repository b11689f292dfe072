/**
 * hotcount/proxy: the limiting reverse proxy as a library (the `hotcount proxy` command runs
 * it): `new LimitingProxy({ upstream, limits })`, then `proxy.server.listen(...)`, and
 * `createAdminServer(proxy)` for the status page.
 */
export { createAdminServer } from './admin.js';
export { createDemoUpstream } from './demo-upstream.js';
export { parseDuration, parseRate } from './duration.js';
export { METRICS_CONTENT_TYPE, metricsText } from './metrics.js';
export { LimitingProxy, ProxyLimit, type ProxyLimitOptions, type ProxyOptions } from './proxy.js';
export { type LimitStatus, type ProxyStatus, statusOf } from './status.js';
