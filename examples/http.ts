// examples/http.ts
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { inflightLimit, rateLimit } from 'hotcount/http';

// Per client IP: 2 requests a second, and at most 10 in progress at once.
const rate = rateLimit({ limit: 2, windowMs: 1000 });
const inflight = inflightLimit({ limit: 10 });
const server = createServer((req, res) =>
  inflight(req, res, () => rate(req, res, () => res.end('hello\n'))),
);
server.listen(0, '127.0.0.1');
await once(server, 'listening');
const { port } = server.address() as AddressInfo;

const statuses = [];
for (let i = 0; i < 3; i++) statuses.push((await fetch(`http://127.0.0.1:${port}/`)).status);
console.log(statuses.join(' '));
server.close();
