// examples/proxy.ts
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { createDemoUpstream, LimitingProxy } from 'hotcount/proxy';

// The service to protect (here the demo upstream), and the proxy in front of it.
const upstream = createDemoUpstream().listen(0, '127.0.0.1');
await once(upstream, 'listening');
const proxy = new LimitingProxy({
  upstream: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`,
  limits: [{ name: 'per-client', rate: '3/1m', inflight: 10 }],
});
proxy.server.listen(0, '127.0.0.1');
await once(proxy.server, 'listening');

const url = `http://127.0.0.1:${(proxy.server.address() as AddressInfo).port}/`;
const statuses: number[] = [];
for (let i = 0; i < 4; i++) {
  const response = await fetch(url);
  await response.arrayBuffer();
  statuses.push(response.status);
}
console.log(statuses.join(' ')); // 200 200 200 429: the fourth is over 3 a minute
await proxy.close(0);
upstream.close();
