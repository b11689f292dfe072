// examples/koa.ts
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { inflightLimit, rateLimit } from 'hotcount/koa';
import Koa from 'koa';

// Per client IP: 2 requests a minute; per API key: at most 10 requests in progress at once.
const app = new Koa();
app.use(rateLimit({ limit: 2, windowMs: 60_000 }));
app.use(inflightLimit({ limit: 10, key: (ctx) => ctx.get('x-api-key') || 'anonymous' }));
app.use(async (ctx) => {
  ctx.body = 'hello\n';
});
const server = app.listen(0, '127.0.0.1');
await once(server, 'listening');
const { port } = server.address() as AddressInfo;

const statuses = [];
for (let i = 0; i < 3; i++) statuses.push((await fetch(`http://127.0.0.1:${port}/`)).status);
console.log(statuses.join(' '));
server.close();
