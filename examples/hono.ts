// examples/hono.ts
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server'; // Bun: export default app; Deno: Deno.serve(app.fetch)
import { Hono } from 'hono';
import { inflightLimit, rateLimit } from 'hotcount/hono';

// Per client IP: 2 requests a minute; under /api, at most 10 in progress per API key.
const app = new Hono();
app.use(rateLimit({ limit: 2, windowMs: 60_000 }));
app.use(
  '/api/*',
  inflightLimit({ limit: 10, key: (c) => c.req.header('x-api-key') ?? 'anonymous' }),
);
app.get('/', (c) => c.text('hello\n'));
const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' });
await once(server, 'listening');
const { port } = server.address() as AddressInfo;

const statuses = [];
for (let i = 0; i < 3; i++) statuses.push((await fetch(`http://127.0.0.1:${port}/`)).status);
console.log(statuses.join(' '));
server.close();
