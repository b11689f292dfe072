/**
 * The proxy facing clients and upstreams it does not trust (issue 21): each test drives the
 * running proxy over real sockets the way an attacker or a broken upstream would.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { type IncomingMessage, request } from 'node:http';
import { type AddressInfo, connect, createServer as createNetServer, type Socket } from 'node:net';
import { test } from 'node:test';
import { requestFields } from '../../src/proxy/header-fields.js';
import { BUCKETS_S } from '../../src/proxy/histogram.js';
import { LimitingProxy, type ProxyOptions, statusOf } from '../../src/proxy/index.js';
import { Latency } from '../../src/proxy/latency.js';
import { listen } from '../helpers/http.js';
import { startProxy } from '../helpers/proxy-cli.js';

const secret = new Uint8Array(16).fill(21);

async function proxyOf(options: Omit<ProxyOptions, 'secret'>) {
  const proxy = new LimitingProxy({ secret, ...options });
  proxy.server.listen(0, '127.0.0.1');
  await once(proxy.server, 'listening');
  const { port } = proxy.server.address() as AddressInfo;
  return { proxy, port, url: `http://127.0.0.1:${port}` };
}

/** An upstream that counts what reaches it. */
async function counting() {
  const seen: string[] = [];
  const up = await listen((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    req.resume();
    req.on('end', () => res.end('ok'));
  });
  return { ...up, seen };
}

/** Writes `bytes` on a fresh connection; resolves with all the proxy sent back until it closed. */
async function exchangeRaw(port: number, bytes: string): Promise<string> {
  const socket = connect(port, '127.0.0.1');
  let answer = '';
  socket.on('data', (chunk) => {
    answer += chunk;
  });
  socket.on('error', () => {});
  socket.write(bytes);
  await once(socket, 'close');
  return answer;
}

const SMUGGLED = [
  // Content-Length and Transfer-Encoding: a front end reading one and a back end the other
  // disagree where the request ends, and the rest is a second request of the attacker's.
  'POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n' +
    '0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: a\r\n\r\n',
  // Two Content-Lengths.
  'POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\nContent-Length: 39\r\n\r\n' +
    'GET /smuggled HTTP/1.1\r\nHost: a\r\n\r\n',
];

test('request smuggling: both framings are 400, the connection closed, nothing reaches the upstream', async () => {
  const up = await counting();
  const { proxy, port } = await proxyOf({ upstream: up.url });
  try {
    for (const bytes of SMUGGLED) {
      const answer = await exchangeRaw(port, bytes);
      assert.match(answer, /^HTTP\/1\.1 400 /);
      assert.equal(answer.match(/HTTP\/1\.1/g)?.length, 1, 'one answer, then the end');
    }
    assert.deepEqual(up.seen, []);
  } finally {
    await proxy.close(0);
    up.server.close();
  }
});

test('request smuggling: refused by the proxy itself when Node runs with --insecure-http-parser', async () => {
  // NODE_OPTIONS reaches every process; with this flag node:http's parser takes both framings,
  // and the proxy's own check (fields.ts) is what stands.
  const up = await counting();
  let started: Awaited<ReturnType<typeof startProxy>> | null = null;
  try {
    started = await startProxy(['--upstream', up.url, '--listen', '0'], {
      ...process.env,
      NODE_OPTIONS: '--insecure-http-parser',
    });
    const port = Number(new URL(started.url).port);
    // The flag lets Content-Length with Transfer-Encoding through node:http (two
    // Content-Lengths it refuses still): the proxy's own 400 says why.
    const answer = await exchangeRaw(port, SMUGGLED[0]);
    assert.match(answer, /^HTTP\/1\.1 400 /, answer);
    assert.match(answer, /ambiguous framing: content-length with transfer-encoding/);
    assert.match(await exchangeRaw(port, SMUGGLED[1]), /^HTTP\/1\.1 400 /);
    assert.deepEqual(up.seen, []);
    // A request framed one way only still goes through.
    const res = await fetch(started.url, { method: 'POST', body: 'fine' });
    assert.equal(res.status, 200);
    assert.deepEqual(up.seen, ['POST /']);
  } finally {
    if (started !== null) {
      started.child.kill('SIGTERM');
      await once(started.child, 'exit');
    }
    up.server.close();
  }
});

test('requestFields finds both ambiguous framings, whichever parser came before it', () => {
  // node:http refuses two Content-Lengths in every mode today; the check stands if it ever
  // lets them through, as it does Content-Length with Transfer-Encoding under the flag.
  const scan = (raw: string[]) => requestFields(raw, '127.0.0.1', 'up', false).fault;
  assert.equal(
    scan(['Content-Length', '0', 'content-length', '39']),
    'more than one content-length',
  );
  assert.equal(
    scan(['Content-Length', '4', 'Transfer-Encoding', 'chunked']),
    'content-length with transfer-encoding',
  );
  assert.equal(scan(['Content-Length', '4']), null);
  assert.equal(scan(['Transfer-Encoding', 'chunked']), null);
});

test('a head over maxHeaderSize is 431, a target over maxUrlLength 414; neither reaches the upstream', async () => {
  const up = await counting();
  const defaults = await proxyOf({ upstream: up.url });
  const tight = await proxyOf({ upstream: up.url, maxHeaderSize: 4096, maxUrlLength: 100 });
  const status = async (port: number, path: string, headers: Record<string, string> = {}) => {
    const answer = await exchangeRaw(
      port,
      `GET ${path} HTTP/1.1\r\nHost: a\r\nConnection: close\r\n${Object.entries(headers)
        .map(([k, v]) => `${k}: ${v}\r\n`)
        .join('')}\r\n`,
    );
    return Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1]);
  };
  try {
    // The defaults: 16 KiB of head, 8,192 characters of target.
    assert.equal(await status(defaults.port, '/', { 'x-big': 'a'.repeat(12_000) }), 200);
    assert.equal(await status(defaults.port, '/', { 'x-big': 'a'.repeat(20_000) }), 431);
    assert.equal(await status(defaults.port, `/${'p'.repeat(8_000)}`), 200);
    assert.equal(await status(defaults.port, `/${'p'.repeat(9_000)}`), 414);
    assert.equal(await status(defaults.port, `/${'p'.repeat(20_000)}`), 431);
    assert.equal(up.seen.length, 2);
    // The options.
    assert.equal(await status(tight.port, '/', { 'x-big': 'a'.repeat(5_000) }), 431);
    assert.equal(await status(tight.port, `/${'p'.repeat(100)}`), 414);
    assert.equal(await status(tight.port, `/${'p'.repeat(90)}`), 200);
    assert.equal(up.seen.length, 3);
    assert.equal(statusOf(defaults.proxy).rejected.url, 1);
  } finally {
    await defaults.proxy.close(0);
    await tight.proxy.close(0);
    up.server.close();
  }
});

test('500 slowloris clients: a normal client is answered within a second; they are cut after headersTimeout', async () => {
  const up = await counting();
  const headersTimeout = 1000;
  const { proxy, url, port } = await proxyOf({ upstream: up.url, headersTimeout });
  const sockets: Socket[] = [];
  try {
    const opened = Date.now();
    for (let i = 0; i < 500; i++) {
      const socket = connect(port, '127.0.0.1');
      socket.on('error', () => {});
      // Read, or the socket never sees the proxy's end and never closes.
      socket.resume();
      // A head begun and never finished.
      socket.write('GET / HTTP/1.1\r\nHost: a\r\nX-Slow: ');
      sockets.push(socket);
    }
    await Promise.all(sockets.map((socket) => once(socket, 'connect')));
    const asked = Date.now();
    const res = await fetch(url);
    assert.equal(res.status, 200);
    await res.text();
    assert.ok(Date.now() - asked < 1000, `answered in ${Date.now() - asked} ms`);
    // node:http looks every second here: each is cut between headersTimeout and a second after.
    // Waited for with a deadline, so that a proxy that never cuts them fails here, not hangs.
    const closed = Promise.all(sockets.map((s) => (s.closed ? null : once(s, 'close'))));
    const late = new Promise((resolve) => setTimeout(resolve, headersTimeout + 2500).unref());
    const outcome = await Promise.race([closed.then(() => 'cut'), late.then(() => 'late')]);
    assert.equal(outcome, 'cut', 'the slow clients are cut within headersTimeout + 2.5 s');
    const took = Date.now() - opened;
    assert.ok(took >= headersTimeout - 50, `cut after ${took} ms, not before headersTimeout`);
    assert.ok(took < headersTimeout + 2500, `all cut within ${took} ms`);
    assert.equal(up.seen.length, 1);
  } finally {
    for (const socket of sockets) socket.destroy();
    await proxy.close(0);
    up.server.close();
  }
});

/** An HTTP/1.1 keep-alive connection that stays open until destroyed. */
async function openConnection(port: number): Promise<Socket> {
  const socket = connect(port, '127.0.0.1');
  socket.on('error', () => {});
  await once(socket, 'connect');
  return socket;
}

/** Sends one request on an open connection; resolves with the status line's code. */
async function ask(socket: Socket): Promise<number> {
  socket.write('GET / HTTP/1.1\r\nHost: a\r\n\r\n');
  const [chunk] = (await once(socket, 'data')) as [Buffer];
  return Number(/^HTTP\/1\.1 (\d{3})/.exec(chunk.toString())?.[1]);
}

test('maxConnections: the excess is answered 503 and counted; far past it, closed; the proxy serves on', async () => {
  const up = await counting();
  const { proxy, port, url } = await proxyOf({ upstream: up.url, maxConnections: 3 });
  const held: Socket[] = [];
  try {
    for (let i = 0; i < 3; i++) {
      held.push(await openConnection(port));
      assert.equal(await ask(held[i]), 200);
    }
    const excess = await openConnection(port);
    assert.equal(await ask(excess), 503);
    await once(excess, 'close');
    assert.equal(statusOf(proxy).connectionsRefused, 1);
    // Past twice the cap, connections are closed unanswered, and counted too.
    for (let i = 0; i < 3; i++) held.push(await openConnection(port));
    const dropped = await openConnection(port);
    dropped.write('GET / HTTP/1.1\r\nHost: a\r\n\r\n');
    let answer = '';
    dropped.on('data', (chunk) => {
      answer += chunk;
    });
    await once(dropped, 'close');
    assert.equal(answer, '');
    assert.equal(statusOf(proxy).connectionsRefused, 2);
    for (const socket of held.splice(3)) socket.destroy();
    // Below the cap again: served.
    held[0].destroy();
    await new Promise((r) => setTimeout(r, 50));
    assert.equal((await fetch(url)).status, 200);
    assert.equal(await ask(held[1]), 200);
  } finally {
    for (const socket of held) socket.destroy();
    await proxy.close(0);
    up.server.close();
  }
});

/** An upstream speaking raw bytes: `serve` gets each connection. */
async function rawUpstream(serve: (socket: Socket) => void) {
  const server = createNetServer((socket) => {
    socket.on('error', () => {});
    serve(socket);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

/** Waits until the proxy holds nothing: no request in progress, no guard, no client socket. */
async function settled(proxy: LimitingProxy): Promise<void> {
  const connections = () =>
    new Promise<number>((resolve, reject) =>
      proxy.server.getConnections((error, n) => (error ? reject(error) : resolve(n))),
    );
  const deadline = Date.now() + 2000;
  for (;;) {
    const status = statusOf(proxy);
    const quiet =
      status.inflight === 0 &&
      status.limits.every((l) => (l.inflight?.inProgress ?? 0) === 0) &&
      (await connections()) === 0;
    if (quiet) return;
    if (Date.now() > deadline) {
      assert.fail(`still held: ${status.inflight} in progress, ${await connections()} sockets`);
    }
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** One request on a connection of its own; what the client saw. */
function send(port: number, body?: Buffer): Promise<{ status: number; got: number; cut: boolean }> {
  return new Promise((resolve, reject) => {
    const req = request({
      host: '127.0.0.1',
      port,
      method: body === undefined ? 'GET' : 'POST',
      path: '/',
      agent: false,
    });
    req.on('error', (error) => {
      // The upstream's 504 may come while the body is still going up: the client's write fails.
      if (status !== 0) resolve({ status, got: 0, cut: true });
      else reject(error);
    });
    let status = 0;
    req.on('response', (res: IncomingMessage) => {
      status = res.statusCode ?? 0;
      let got = 0;
      res.on('data', (chunk: Buffer) => {
        got += chunk.length;
      });
      res.on('end', () => resolve({ status, got, cut: !res.complete }));
      res.on('error', () => resolve({ status, got, cut: true }));
      res.on('aborted', () => resolve({ status, got, cut: true }));
    });
    req.end(body);
  });
}

test('an upstream that answers garbage, cuts its body, or never reads ours: 502, a cut body or 504; nothing leaks', async () => {
  const garbage = await rawUpstream((socket) => {
    socket.once('data', () => socket.end('this is not HTTP\r\n\r\n'));
  });
  const cutting = await rawUpstream((socket) => {
    socket.once('data', () => {
      socket.write('HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n0123456789');
      setTimeout(() => socket.destroy(), 20);
    });
  });
  const deaf = await rawUpstream((socket) => socket.pause());
  const limits = [{ inflight: 10 }];
  const proxies = await Promise.all([
    proxyOf({ upstream: garbage.url, limits }),
    proxyOf({ upstream: cutting.url, limits }),
    proxyOf({ upstream: deaf.url, limits, timeoutMs: 300 }),
  ]);
  const [g, c, d] = proxies;
  try {
    for (let i = 0; i < 2; i++) {
      const answer = await send(g.port);
      assert.equal(answer.status, 502);
      assert.equal(answer.cut, false);
    }
    await settled(g.proxy);

    const cut = await send(c.port);
    assert.equal(cut.status, 200);
    assert.ok(cut.cut && cut.got < 100, `a cut body: ${cut.got} of 100 bytes`);
    await settled(c.proxy);

    // 4 MiB the upstream never reads: the upload stalls on backpressure, the upstream is silent.
    const deafAnswer = await send(d.port, Buffer.alloc(4 << 20, 0x61));
    assert.equal(deafAnswer.status, 504);
    await settled(d.proxy);
    assert.equal(statusOf(d.proxy).upstreamErrors.timeout, 1);

    // The proxies live on.
    assert.equal((await send(g.port)).status, 502);
    assert.equal((await send(d.port)).status, 504);
    await Promise.all(proxies.map(({ proxy }) => settled(proxy)));
  } finally {
    for (const { proxy } of proxies) await proxy.close(0);
    for (const up of [garbage, cutting, deaf]) up.server.close();
  }
});

test('a client that goes away mid-request: the upstream is cut, not counted as its fault or its time', async () => {
  let reached = () => {};
  const arrived = new Promise<void>((resolve) => {
    reached = resolve;
  });
  const silent = await rawUpstream((socket) => socket.once('data', () => reached()));
  const { proxy, port } = await proxyOf({ upstream: silent.url, limits: [{ inflight: 10 }] });
  try {
    const client = connect(port, '127.0.0.1');
    client.on('error', () => {});
    client.write('GET / HTTP/1.1\r\nHost: a\r\n\r\n');
    await arrived;
    client.destroy();
    await settled(proxy);
    assert.equal(proxy.traffic.total.count, 1, 'the request is in the total histogram');
    assert.equal(proxy.traffic.upstream.count, 0, 'an abort is no measure of the upstream');
    assert.deepEqual(statusOf(proxy).upstreamErrors, { refused: 0, timeout: 0 });
  } finally {
    await proxy.close(0);
    silent.server.close();
  }
});

test('Latency: the histogram since the start, and the quantiles of the last minute within 1%', () => {
  let now = 1_000_000;
  const latency = new Latency(() => now);
  assert.deepEqual(latency.lastMinute(), { p50: null, p90: null, p99: null, max: null });
  for (let i = 0; i < 98; i++) latency.observe(3); // the 0.0025..0.005 s bucket
  latency.observe(700);
  latency.observe(800); // the 0.5..1 s bucket
  const { p50, p90, p99, max } = latency.lastMinute();
  const near = (got: number | null, want: number) =>
    assert.ok(got !== null && Math.abs(got - want) <= 0.01 * want, `${got} against ${want}`);
  near(p50, 3);
  near(p90, 3);
  near(p99, 700); // rank floor(0.99 * 99) = 98 of 0..99
  assert.equal(max, 800);
  near(latency.quantileMs(0.995), 700);
  // The histogram for scrapers: bucket counts, sum and count since the start.
  assert.equal(latency.histogram.counts[BUCKETS_S.indexOf(0.005)], 98);
  assert.equal(latency.histogram.counts[BUCKETS_S.indexOf(1)], 2);
  assert.equal(latency.count, 100);
  assert.ok(Math.abs(latency.histogram.sum - (98 * 0.003 + 1.5)) < 1e-9);
  // A minute and a step on, the window has let them go; the totals since the start have not.
  now += 65_000;
  assert.equal(latency.quantileMs(0.5), null);
  assert.equal(latency.count, 100);
});
