/**
 * The upstream `hotcount proxy --demo` (and `npm start`) puts behind the proxy, so that the
 * limits can be tried without a server of one's own:
 *   /          hello
 *   /slow?ms=N answers after N ms (at most 10 s): holds a place under an inflight limit
 *   /echo      streams the request body back
 */
import { createServer, type Server } from 'node:http';

/** The demo upstream, not yet listening: `server.listen(port, host)`. */
export function createDemoUpstream(): Server {
  return createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://demo');
    if (url.pathname === '/slow') {
      const ms = Math.min(10_000, Math.max(0, Number(url.searchParams.get('ms')) || 1000));
      const timer = setTimeout(() => res.end(`slow: answered after ${ms} ms\n`), ms);
      res.once('close', () => clearTimeout(timer));
      return;
    }
    if (url.pathname === '/echo') {
      res.writeHead(200, {
        'Content-Type': req.headers['content-type'] ?? 'application/octet-stream',
      });
      req.pipe(res);
      return;
    }
    res.setHeader('Content-Type', 'text/plain; charset=utf-8');
    res.end(`hello from the demo upstream (you are ${req.headers['x-forwarded-for']})\n`);
  });
}
