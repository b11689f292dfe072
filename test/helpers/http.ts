/** Real servers for the HTTP tests: node:http on a free loopback port. */
import { once } from 'node:events';
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A server on a free loopback port, for `handler` (an Express app too); closed by the caller. */
export async function listen(
  handler: RequestListener,
): Promise<{ server: Server; url: string; port: number }> {
  const server = createServer(handler);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return { server, url: `http://127.0.0.1:${port}`, port };
}
