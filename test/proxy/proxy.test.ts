import assert from 'node:assert/strict';
import { once } from 'node:events';
import { type IncomingMessage, request, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { test } from 'node:test';
import {
  createAdminServer,
  LimitingProxy,
  type ProxyOptions,
  type ProxyStatus,
  statusOf,
} from '../../src/proxy/index.js';
import { listen } from '../helpers/http.js';

const secret = new Uint8Array(16).fill(45);

/** An upstream that records what reaches it; `answer` decides each response. */
async function upstream(answer: (req: IncomingMessage, res: ServerResponse) => void) {
  const seen: { method: string; url: string; headers: IncomingMessage['headers'] }[] = [];
  const { server, url, port } = await listen((req, res) => {
    seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
    answer(req, res);
  });
  return { server, url, port, seen };
}

async function proxyOf(options: Omit<ProxyOptions, 'secret'>) {
  const proxy = new LimitingProxy({ secret, ...options });
  proxy.server.listen(0, '127.0.0.1');
  await once(proxy.server, 'listening');
  const { port } = proxy.server.address() as AddressInfo;
  return { proxy, url: `http://127.0.0.1:${port}`, port };
}

async function closeAll(...servers: (Server | LimitingProxy)[]) {
  for (const server of servers) {
    if (server instanceof LimitingProxy) await server.close(0);
    else {
      server.closeAllConnections();
      server.close();
    }
  }
}

/** A raw request, so that hop-by-hop fields can be sent as a client would. */
function raw(
  port: number,
  options: { method?: string; path?: string; headers?: Record<string, string> },
) {
  return new Promise<{
    status: number;
    headers: IncomingMessage['headers'];
    body: string;
    rawHeaders: string[];
  }>((resolve, reject) => {
    const req = request({
      host: '127.0.0.1',
      port,
      method: options.method ?? 'GET',
      path: options.path ?? '/',
      headers: options.headers,
      agent: false,
    });
    req.on('error', reject);
    req.on('response', async (res) => {
      let body = '';
      for await (const chunk of res) body += chunk;
      resolve({
        status: res.statusCode ?? 0,
        headers: res.headers,
        body,
        rawHeaders: res.rawHeaders,
      });
    });
    req.end();
  });
}

test('forwards method, path and body; drops hop-by-hop fields both ways; sets X-Forwarded-*', async () => {
  const up = await upstream((req, res) => {
    res.setHeader('Connection', 'close, x-upstream-hop');
    res.setHeader('X-Upstream-Hop', 'only for the proxy');
    res.setHeader('Set-Cookie', ['a=1', 'b=2']);
    res.setHeader('Keep-Alive', 'timeout=77');
    req.pipe(res);
  });
  const { proxy, port } = await proxyOf({ upstream: up.url });
  try {
    const res = await fetch(`http://127.0.0.1:${port}/a/b?c=d`, {
      method: 'POST',
      body: 'hello',
      headers: { 'x-forwarded-for': '203.0.113.9', 'x-end-to-end': 'kept' },
    });
    assert.equal(res.status, 200);
    assert.equal(await res.text(), 'hello');
    assert.equal(res.headers.get('x-upstream-hop'), null);
    assert.notEqual(res.headers.get('keep-alive'), 'timeout=77');
    assert.deepEqual(res.headers.getSetCookie(), ['a=1', 'b=2']);
    const seen = up.seen.at(-1);
    assert.ok(seen);
    assert.equal(seen.method, 'POST');
    assert.equal(seen.url, '/a/b?c=d');
    assert.equal(seen.headers['x-end-to-end'], 'kept');
    // Without trusted proxies, a client's own X-Forwarded-For is not passed on as true.
    assert.equal(seen.headers['x-forwarded-for'], '127.0.0.1');
    assert.equal(seen.headers['x-forwarded-proto'], 'http');
    assert.equal(seen.headers['x-forwarded-host'], `127.0.0.1:${port}`);
    assert.equal(seen.headers.host, `127.0.0.1:${up.port}`);

    const hops = await raw(port, {
      path: '/hops',
      headers: {
        Host: 'shop.example',
        Connection: 'x-client-hop',
        'X-Client-Hop': 'only for the proxy',
        'Proxy-Authorization': 'Basic secret',
        TE: 'trailers',
      },
    });
    assert.equal(hops.status, 200);
    const hopSeen = up.seen.at(-1);
    assert.equal(hopSeen?.url, '/hops');
    assert.equal(hopSeen?.headers['x-client-hop'], undefined);
    assert.equal(hopSeen?.headers['proxy-authorization'], undefined);
    assert.equal(hopSeen?.headers.te, undefined);
    assert.equal(hopSeen?.headers['x-forwarded-host'], 'shop.example');
  } finally {
    await closeAll(proxy, up.server);
  }
});

test('trustProxy: the X-Forwarded-For chain is extended, not replaced', async () => {
  const up = await upstream((_req, res) => res.end('ok'));
  const { proxy, url } = await proxyOf({ upstream: up.url, trustProxy: 1 });
  try {
    await fetch(url, {
      headers: { 'x-forwarded-for': '203.0.113.9', 'x-forwarded-proto': 'https' },
    });
    assert.equal(up.seen[0].headers['x-forwarded-for'], '203.0.113.9, 127.0.0.1');
    assert.equal(up.seen[0].headers['x-forwarded-proto'], 'https');
  } finally {
    await closeAll(proxy, up.server);
  }
});

test('bodies stream both ways: each side sees the first chunk before the other has finished', async () => {
  let releaseUpstream = () => {};
  const upstreamGotFirst = new Promise<void>((resolve) => {
    void (async () => {
      const up = await upstream((req, res) => {
        req.once('data', () => resolve());
        res.writeHead(200);
        res.write('first;');
        releaseUpstream = () => {
          req.resume();
          res.end('last');
        };
      });
      state.up = up;
      state.ready();
    })();
  });
  const state: { up?: Awaited<ReturnType<typeof upstream>>; ready: () => void } = {
    ready: () => {},
  };
  await new Promise<void>((resolve) => {
    state.ready = resolve;
  });
  const up = state.up as Awaited<ReturnType<typeof upstream>>;
  const { proxy, port } = await proxyOf({ upstream: up.url });
  try {
    const req = request({ host: '127.0.0.1', port, method: 'POST', path: '/', agent: false });
    req.write('chunk one');
    // The request is not ended: the upstream has its first chunk all the same.
    await upstreamGotFirst;
    const [res] = (await once(req, 'response')) as [IncomingMessage];
    const [first] = (await once(res, 'data')) as [Buffer];
    // The upstream has not ended its response: the client has its first chunk all the same.
    assert.equal(first.toString(), 'first;');
    releaseUpstream();
    req.end();
    let rest = '';
    for await (const chunk of res) rest += chunk;
    assert.equal(rest, 'last');
  } finally {
    await closeAll(proxy, up.server);
  }
});

test('over the rate: 429 with the fields, and the upstream never sees the request', async () => {
  const up = await upstream((_req, res) => res.end('ok'));
  const { proxy, url } = await proxyOf({
    upstream: up.url,
    limits: [{ name: 'per-ip', rate: '2/1m' }],
  });
  try {
    const statuses = [];
    for (let i = 0; i < 4; i++) {
      const res = await fetch(url);
      statuses.push(res.status);
      assert.match(res.headers.get('ratelimit-policy') ?? '', /^"per-ip";q=2;w=60$/);
      if (res.status === 429) {
        assert.equal(res.headers.get('content-type'), 'application/problem+json');
        assert.ok(Number(res.headers.get('retry-after')) >= 1);
        assert.equal(((await res.json()) as { status: number }).status, 429);
      } else await res.text();
    }
    assert.deepEqual(statuses, [200, 200, 429, 429]);
    assert.equal(up.seen.length, 2);
    assert.deepEqual(statusOf(proxy).requests, {
      allowed: 2,
      rate_limited: 2,
      inflight_limited: 0,
    });
  } finally {
    await closeAll(proxy, up.server);
  }
});

test('over the inflight limit: 503 before the upstream; the count returns to 0 on every ending', async () => {
  const pending: ServerResponse[] = [];
  const up = await upstream((req, res) => {
    if (req.url === '/slow') pending.push(res);
    else res.end('ok');
  });
  const { proxy, url, port } = await proxyOf({ upstream: up.url, limits: [{ inflight: 1 }] });
  const inProgress = () => statusOf(proxy).limits[0].inflight?.inProgress;
  try {
    const slow = fetch(`${url}/slow`);
    while (pending.length === 0) await new Promise((r) => setTimeout(r, 5));
    assert.equal(inProgress(), 1);
    const refused = await fetch(url);
    assert.equal(refused.status, 503);
    assert.ok(Number(refused.headers.get('retry-after')) >= 1);
    assert.equal(up.seen.length, 1);
    assert.deepEqual(statusOf(proxy).limits[0].topByInflight, [{ key: '127.0.0.1', inflight: 1 }]);
    pending[0].end('done');
    assert.equal(await (await slow).text(), 'done');
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(inProgress(), 0);

    // The client goes away before the upstream answers.
    const aborted = request({ host: '127.0.0.1', port, path: '/slow', agent: false });
    aborted.on('error', () => {});
    aborted.end();
    while (pending.length === 1) await new Promise((r) => setTimeout(r, 5));
    assert.equal(inProgress(), 1);
    aborted.destroy();
    while (inProgress() !== 0) await new Promise((r) => setTimeout(r, 5));
    assert.equal(statusOf(proxy).inflight, 0);
    assert.equal((await fetch(url)).status, 200);
  } finally {
    await closeAll(proxy, up.server);
  }
});

test('502 when the upstream refuses or resets, 504 when it stays silent; nothing held after', async () => {
  const closed = await listen(() => {});
  const closedUrl = closed.url;
  await closeAll(closed.server);
  const refusing = await proxyOf({ upstream: closedUrl, limits: [{ inflight: 5 }] });
  const up = await upstream((req, res) => {
    if (req.url === '/reset') req.socket.destroy();
    else if (req.url === '/silent') setTimeout(() => res.end('late'), 2000).unref();
    else res.end('ok');
  });
  const { proxy, url } = await proxyOf({
    upstream: up.url,
    timeoutMs: 150,
    limits: [{ inflight: 5 }],
  });
  try {
    const refused = await fetch(refusing.url);
    assert.equal(refused.status, 502);
    assert.equal(((await refused.json()) as { title: string }).title, 'Bad Gateway');
    assert.equal((await fetch(`${url}/reset`)).status, 502);
    const silent = await fetch(`${url}/silent`);
    assert.equal(silent.status, 504);
    assert.equal(statusOf(proxy).upstreamErrors.timeout, 1);
    assert.equal(statusOf(proxy).upstreamErrors.refused, 1);
    assert.equal((await fetch(url)).status, 200);
    assert.equal(statusOf(proxy).limits[0].inflight?.inProgress, 0);
    assert.equal(statusOf(refusing.proxy).limits[0].inflight?.inProgress, 0);
  } finally {
    await closeAll(refusing.proxy, proxy, up.server);
  }
});

/** Opens an upgrade through `port`; resolves with the status and, on 101, the socket. */
function upgrade(port: number, headers: Record<string, string> = {}) {
  return new Promise<{ status: number; socket: Socket | null; body: string }>((resolve, reject) => {
    const req = request({
      host: '127.0.0.1',
      port,
      path: '/ws',
      agent: false,
      headers: {
        Connection: 'Upgrade',
        Upgrade: 'websocket',
        'Sec-WebSocket-Key': 'dGhlIHNhbXBsZSBub25jZQ==',
        ...headers,
      },
    });
    req.on('error', reject);
    req.on('upgrade', (res, socket) => resolve({ status: res.statusCode ?? 0, socket, body: '' }));
    req.on('response', async (res) => {
      let body = '';
      for await (const chunk of res) body += chunk;
      resolve({ status: res.statusCode ?? 0, socket: null, body });
    });
    req.end();
  });
}

test('WebSocket upgrades tunnel through, under the limits, holding their place while open', async () => {
  const up = await upstream((_req, res) => res.end('no upgrade here'));
  let forwardedFor: unknown;
  up.server.on('upgrade', (req: IncomingMessage, socket: Socket) => {
    forwardedFor = req.headers['x-forwarded-for'];
    socket.write(
      'HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n',
    );
    socket.pipe(socket); // echo
  });
  const { proxy, port } = await proxyOf({
    upstream: up.url,
    limits: [{ inflight: 1, rate: '3/1m' }],
  });
  try {
    const open = await upgrade(port);
    assert.equal(open.status, 101);
    const socket = open.socket as Socket;
    socket.write('ping');
    const [echo] = (await once(socket, 'data')) as [Buffer];
    assert.equal(echo.toString(), 'ping');
    assert.equal(forwardedFor, '127.0.0.1');
    assert.equal(statusOf(proxy).limits[0].inflight?.inProgress, 1);
    // A second tunnel from the same client is over the inflight limit.
    const second = await upgrade(port);
    assert.equal(second.status, 503);
    assert.equal(JSON.parse(second.body).status, 503);
    socket.destroy();
    while (statusOf(proxy).limits[0].inflight?.inProgress !== 0)
      await new Promise((r) => setTimeout(r, 5));
    const third = await upgrade(port);
    assert.equal(third.status, 101);
    third.socket?.destroy();
    // The rate counted the tunnels that passed: 2 of 3; the third request is refused with 429.
    while (statusOf(proxy).limits[0].inflight?.inProgress !== 0)
      await new Promise((r) => setTimeout(r, 5));
    const fourth = await upgrade(port);
    assert.equal(fourth.status, 101);
    fourth.socket?.destroy();
    while (statusOf(proxy).limits[0].inflight?.inProgress !== 0)
      await new Promise((r) => setTimeout(r, 5));
    assert.equal((await upgrade(port)).status, 429);
  } finally {
    await closeAll(proxy, up.server);
  }
});

test('limits per route prefix and per key kind; a request meets every limit that covers it', async () => {
  const up = await upstream((_req, res) => res.end('ok'));
  const { proxy, url } = await proxyOf({
    upstream: up.url,
    limits: [
      { name: 'api', prefix: '/api', key: 'header:x-api-key', rate: '2/1m' },
      { name: 'all', rate: '5/1m' },
    ],
  });
  const get = (path: string, key?: string) =>
    fetch(`${url}${path}`, { headers: key === undefined ? {} : { 'x-api-key': key } }).then(
      async (r) => {
        await r.text();
        return r.status;
      },
    );
  try {
    assert.deepEqual(
      [await get('/api/x', 'k1'), await get('/api?y', 'k1'), await get('/api/z', 'k1')],
      [200, 200, 429],
    );
    assert.equal(await get('/api/x', 'k2'), 200); // another key of the same client
    assert.equal(await get('/apix'), 200); // not under /api: a segment boundary
    // "all" (5 a minute per IP) counted every request that passed "api": 4 so far.
    assert.equal(await get('/other'), 200);
    assert.equal(await get('/other'), 429);
    const api = statusOf(proxy).limits[0];
    assert.deepEqual(api.topByRate.map((entry) => entry.key).sort(), [
      'x-api-key:k1',
      'x-api-key:k2',
    ]);
    assert.ok(api.topByRate[0].perSecond > 0);
  } finally {
    await closeAll(proxy, up.server);
  }
});

test('the admin server: /status as JSON, /metrics in the Prometheus text format, / the page', async () => {
  const up = await upstream((_req, res) => res.end('ok'));
  const { proxy, url } = await proxyOf({
    upstream: up.url,
    limits: [{ name: 'per-ip', rate: '1/1m', inflight: 3 }],
  });
  const admin = createAdminServer(proxy);
  admin.listen(0, '127.0.0.1');
  await once(admin, 'listening');
  const adminUrl = `http://127.0.0.1:${(admin.address() as AddressInfo).port}`;
  try {
    for (let i = 0; i < 3; i++) await (await fetch(url)).text();
    const status = (await (await fetch(`${adminUrl}/status`)).json()) as ProxyStatus;
    assert.deepEqual(status.requests, { allowed: 1, rate_limited: 2, inflight_limited: 0 });
    assert.equal(status.limits[0].topByRate[0].key, '127.0.0.1');
    assert.equal(status.perSecond.length, 60);
    const metrics = await fetch(`${adminUrl}/metrics`);
    assert.match(metrics.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
    const families = parseExposition(await metrics.text());
    assert.deepEqual(families.get('hotcount_requests_total')?.samples, [
      ['{outcome="allowed"}', 1],
      ['{outcome="rate_limited"}', 2],
      ['{outcome="inflight_limited"}', 0],
    ]);
    assert.equal(families.get('hotcount_requests_total')?.type, 'counter');
    assert.equal(families.get('hotcount_inflight')?.type, 'gauge');
    // Only the request let through is timed: its duration falls in some bucket, cumulatively.
    const duration = families.get('hotcount_request_duration_seconds');
    assert.equal(duration?.type, 'histogram');
    const buckets = duration.samples.filter(([at]) => at.includes('_bucket'));
    assert.equal(buckets.at(-1)?.[0], 'hotcount_request_duration_seconds_bucket{le="+Inf"}');
    assert.equal(buckets.at(-1)?.[1], 1);
    for (let i = 1; i < buckets.length; i++) assert.ok(buckets[i][1] >= buckets[i - 1][1]);
    assert.ok(duration.samples.some(([at, v]) => at.endsWith('_count') && v === 1));
    assert.equal(families.get('hotcount_upstream_duration_seconds')?.type, 'histogram');
    assert.equal(status.latencyMs.total.p50 !== null && status.latencyMs.total.p50 > 0, true);
    const memory = families.get('hotcount_sketch_memory_bytes')?.samples[0];
    assert.deepEqual(memory, ['{limit="per-ip"}', proxy.limits[0].memoryBytes]);
    const page = await fetch(`${adminUrl}/`);
    assert.match(page.headers.get('content-type') ?? '', /^text\/html/);
    assert.match(await page.text(), /<title>hotcount proxy<\/title>/);
    assert.equal((await fetch(`${adminUrl}/nothing`)).status, 404);
  } finally {
    admin.close();
    await closeAll(proxy, up.server);
  }
});

/**
 * A strict reader of the text exposition format (0.0.4): HELP and TYPE before a family's
 * samples, names and labels by the format's grammar, escapes, numbers; throws on anything else.
 */
function parseExposition(text: string) {
  const families = new Map<string, { help: string; type: string; samples: [string, number][] }>();
  assert.ok(text.endsWith('\n'), 'ends with a line feed');
  const name = '[a-zA-Z_:][a-zA-Z0-9_:]*';
  const labels = `\\{(?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\\\\n]|\\\\[\\\\"n])*",?)*\\}`;
  for (const line of text.slice(0, -1).split('\n')) {
    let match = new RegExp(`^# HELP (${name}) (.*)$`).exec(line);
    if (match !== null) {
      assert.ok(!families.has(match[1]), `one HELP for ${match[1]}`);
      families.set(match[1], { help: match[2], type: '', samples: [] });
      continue;
    }
    match = new RegExp(`^# TYPE (${name}) (counter|gauge|histogram|summary|untyped)$`).exec(line);
    if (match !== null) {
      const family = families.get(match[1]);
      assert.ok(
        family && family.type === '' && family.samples.length === 0,
        `TYPE of ${match[1]} before its samples`,
      );
      family.type = match[2];
      continue;
    }
    match = new RegExp(`^(${name})(${labels})? (\\S+)$`).exec(line);
    assert.ok(match !== null, `a sample line: ${line}`);
    // A histogram's samples are its name with _bucket, _sum or _count.
    const base = /^(.*)_(bucket|sum|count)$/.exec(match[1])?.[1];
    const family =
      families.get(match[1]) ??
      (base !== undefined && families.get(base)?.type === 'histogram'
        ? families.get(base)
        : undefined);
    assert.ok(family && family.type !== '', `${match[1]} has HELP and TYPE before its samples`);
    if (family.type === 'counter')
      assert.ok(match[1].endsWith('_total'), `counter ${match[1]} ends in _total`);
    const value = Number(match[3]);
    assert.ok(!Number.isNaN(value) || match[3] === 'NaN', `a number: ${match[3]}`);
    family.samples.push([
      family === families.get(match[1]) ? (match[2] ?? '') : `${match[1]}${match[2] ?? ''}`,
      value,
    ]);
  }
  return families;
}

test('bad options are refused, naming the option', () => {
  assert.throws(() => new LimitingProxy({ upstream: 'ftp://x' }), {
    name: 'RangeError',
    message: /upstream/,
  });
  assert.throws(() => new LimitingProxy({ upstream: 'http://127.0.0.1:1/path' }), {
    name: 'RangeError',
    message: /upstream/,
  });
  assert.throws(
    () =>
      new LimitingProxy({ upstream: 'http://127.0.0.1:1', limits: [{ rate: '10 per minute' }] }),
    {
      name: 'RangeError',
      message: /limits\[0\]\.rate/,
    },
  );
  assert.throws(
    () => new LimitingProxy({ upstream: 'http://127.0.0.1:1', limits: [{ rate: '10/1y' }] }),
    {
      name: 'RangeError',
      message: /limits\[0\]\.rate/,
    },
  );
  assert.throws(
    () => new LimitingProxy({ upstream: 'http://127.0.0.1:1', limits: [{ inflight: 0 }] }),
    {
      name: 'RangeError',
      message: /limits\[0\]\.inflight/,
    },
  );
  assert.throws(
    () =>
      new LimitingProxy({ upstream: 'http://127.0.0.1:1', limits: [{ prefix: 'api' }] as never }),
    {
      name: 'RangeError',
      message: /limits\[0\]\.prefix/,
    },
  );
  assert.throws(
    () =>
      new LimitingProxy({
        upstream: 'http://127.0.0.1:1',
        limits: [{ rate: '1/1s', rat: 1 }] as never,
      }),
    {
      name: 'TypeError',
      message: /rat is not an option/,
    },
  );
  assert.throws(() => new LimitingProxy({ upstream: 'http://127.0.0.1:1', timeoutMs: 0 }), {
    name: 'RangeError',
    message: /timeoutMs/,
  });
  for (const maker of ['rateLimiter', 'inflightCounter']) {
    assert.throws(
      () => new LimitingProxy({ upstream: 'http://127.0.0.1:1', [maker]: 'redis' } as never),
      { name: 'TypeError', message: new RegExp(`^${maker} must be a function`) },
    );
  }
});
