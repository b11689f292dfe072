// examples/express.ts
import type { AddressInfo } from 'node:net';
import express from 'express';
import { rateLimit } from 'express-rate-limit';
import { ExpressRateLimitStore } from 'hotcount/http';

// express-rate-limit as its users know it, counting in fixed memory: 2 a minute per client.
const app = express();
const limiter = rateLimit({ windowMs: 60_000, limit: 2, store: new ExpressRateLimitStore() });
app.use(limiter);
app.get('/', (_req, res) => {
  res.send('hello\n');
});
const server = app.listen(0, '127.0.0.1');
await new Promise((resolve) => server.once('listening', resolve));
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;

const statuses = [];
for (let i = 0; i < 3; i++) statuses.push((await fetch(url)).status);
await limiter.resetKey('127.0.0.1'); // this client starts over; no other client moves
statuses.push((await fetch(url)).status);
console.log(statuses.join(' '));
server.close();
