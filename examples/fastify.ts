// examples/fastify.ts
import Fastify from 'fastify';
import hotcount from 'hotcount/fastify';

const app = Fastify();
await app.register(hotcount, { rate: { limit: 2, windowMs: 60_000 }, inflight: { limit: 10 } });
app.get('/', async () => 'hello');
app.get(
  '/report',
  { config: { hotcount: { rate: { limit: 1, windowMs: 60_000 } } } },
  async () => 'report',
);
app.get('/health', { config: { hotcount: false } }, async () => 'up');

const statuses = [];
for (const url of ['/', '/', '/', '/report', '/report', '/health', '/health', '/health']) {
  statuses.push((await app.inject(url)).statusCode);
}
console.log(statuses.join(' '));
await app.close();
