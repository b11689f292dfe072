/**
 * The admin server: `/` the status page, `/status` the same data as JSON, `/metrics` for
 * Prometheus. It shows client keys (addresses, API key headers): keep it on a private address
 * (the CLI binds it to loopback unless told otherwise).
 */
import { createServer, type Server } from 'node:http';
import type { LimitingProxy } from './limiting-proxy.js';
import { METRICS_CONTENT_TYPE, metricsText } from './metrics.js';
import { statusOf } from './status.js';
import { STATUS_PAGE } from './status-page.js';

/**
 * The admin server of `proxy`, not yet listening: GET or HEAD `/` (the page), `/status` (JSON)
 * and `/metrics`; 404 for other paths, 405 for other methods. Nothing is cached (no-store).
 */
export function createAdminServer(proxy: LimitingProxy): Server {
  return createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    res.setHeader('Cache-Control', 'no-store');
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { Allow: 'GET, HEAD' }).end();
      return;
    }
    let body: string;
    let type: string;
    if (path === '/') {
      body = STATUS_PAGE;
      type = 'text/html; charset=utf-8';
      res.setHeader(
        'Content-Security-Policy',
        "default-src 'self'; script-src 'unsafe-inline'; style-src 'unsafe-inline'",
      );
    } else if (path === '/status') {
      body = JSON.stringify(statusOf(proxy));
      type = 'application/json';
    } else if (path === '/metrics') {
      body = metricsText(statusOf(proxy), proxy.traffic);
      type = METRICS_CONTENT_TYPE;
    } else {
      res
        .writeHead(404, { 'Content-Type': 'text/plain' })
        .end('not found: try /, /status or /metrics\n');
      return;
    }
    res.writeHead(200, { 'Content-Type': type, 'Content-Length': Buffer.byteLength(body) });
    res.end(req.method === 'HEAD' ? undefined : body);
  });
}
