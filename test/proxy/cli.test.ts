import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { SERVER_DEFAULTS } from '../../src/proxy/limiting-proxy.js';
import { listen } from '../helpers/http.js';
import { runProxy, startProxy } from '../helpers/proxy-cli.js';
import { until } from '../helpers/until.js';

const GUIDE = fileURLToPath(new URL('../../../docs/proxy.md', import.meta.url));
const run = (args: string[]) => runProxy(args);
const start = (args: string[]) => startProxy(args);

test('usage errors exit 2 with one line naming the flag; --help exits 0', () => {
  const missing = run([]);
  assert.equal(missing.status, 2);
  assert.match(
    missing.stderr,
    /^hotcount: --upstream is required \(or --demo\)\nTry 'hotcount proxy --help'\.\n$/,
  );
  const rate = run(['--upstream', 'http://127.0.0.1:1', '--rate', '10 per second']);
  assert.equal(rate.status, 2);
  assert.match(rate.stderr, /--rate must be a rate N\/DURATION/);
  const listen = run(['--upstream', 'http://127.0.0.1:1', '--listen', 'nowhere']);
  assert.equal(listen.status, 2);
  assert.match(listen.stderr, /--listen must be \[HOST:\]PORT/);
  const upstream = run(['--upstream', 'https://example.com']);
  assert.equal(upstream.status, 2);
  assert.match(upstream.stderr, /upstream must be http:\/\/HOST\[:PORT\]/);
  const help = run(['--help']);
  assert.equal(help.status, 0);
  assert.match(help.stdout, /^Usage: hotcount proxy --upstream/);
});

test('a config file gives limits per route prefix and key kind; a bad one is named', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'hotcount-proxy-'));
  const upstream = await listen((_req, res) => res.end('ok'));
  const config = join(dir, 'proxy.json');
  writeFileSync(
    config,
    JSON.stringify({
      upstream: upstream.url,
      listen: '127.0.0.1:0',
      limits: [{ name: 'api', prefix: '/api', key: 'header:x-api-key', rate: '1/1m' }],
    }),
  );
  const proxy = await start(['--config', config]);
  try {
    const get = async (path: string) =>
      (await fetch(`${proxy.url}${path}`, { headers: { 'x-api-key': 'k' } })).status;
    assert.deepEqual([await get('/api'), await get('/api'), await get('/other')], [200, 429, 200]);
  } finally {
    proxy.child.kill('SIGTERM');
    await once(proxy.child, 'exit');
    upstream.server.close();
  }
  writeFileSync(config, JSON.stringify({ upstream: upstream.url, limits: [{ prefix: '/api' }] }));
  const bad = run(['--config', config]);
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /limits\[0\] must have a rate, an inflight limit or both/);
  writeFileSync(config, JSON.stringify({ upstream: upstream.url, limit: [] }));
  assert.match(run(['--config', config]).stderr, /unknown field 'limit'/);
});

test('the server flags and config fields reach the proxy; --help states their defaults', async () => {
  const help = run(['--help']).stdout;
  for (const [flag, field] of [
    ['max-connections', 'maxConnections'],
    ['upstream-connections', 'upstreamConnections'],
    ['max-header-size', 'maxHeaderSize'],
    ['max-url-length', 'maxUrlLength'],
  ] as const) {
    const shown = SERVER_DEFAULTS[field].toLocaleString('en-US');
    assert.match(help, new RegExp(`--${flag} N\\s[^-]*\\(default\\s+${shown}\\)`), flag);
  }
  for (const [flag, field] of [
    ['headers-timeout', 'headersTimeout'],
    ['request-timeout', 'requestTimeout'],
    ['keep-alive-timeout', 'keepAliveTimeout'],
  ] as const) {
    const shown = `${SERVER_DEFAULTS[field] / 1000}s`;
    assert.match(help, new RegExp(`--${flag} DURATION\\s[^-]*\\(default\\s+${shown}\\)`), flag);
  }
  const bad = run(['--upstream', 'http://127.0.0.1:1', '--max-connections', 'many']);
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /--max-connections must be an integer >= 1; received "many"/);
  assert.match(
    run(['--upstream', 'http://127.0.0.1:1', '--headers-timeout', '1m', '--request-timeout', '1s'])
      .stderr,
    /headersTimeout must be at most requestTimeout/,
  );

  const up = await listen((req, res) => {
    req.resume();
    res.end('ok');
  });
  const dir = mkdtempSync(join(tmpdir(), 'hotcount-proxy-'));
  const config = join(dir, 'proxy.json');
  writeFileSync(config, JSON.stringify({ maxUrlLength: 100, headersTimeout: '1s' }));
  const proxy = await start([
    ...['--upstream', up.url, '--listen', '0', '--config', config],
    ...['--max-header-size', '4096', '--max-connections', '1'],
  ]);
  const held = connect(Number(new URL(proxy.url).port), '127.0.0.1');
  try {
    held.on('error', () => {});
    held.resume();
    // A head begun and never finished holds the one connection: the next is over the cap.
    held.write('GET / HTTP/1.1\r\nHost: a\r\n');
    await once(held, 'connect');
    await new Promise((r) => setTimeout(r, 100));
    assert.equal((await fetch(proxy.url)).status, 503);
    const opened = Date.now();
    await once(held, 'close');
    assert.ok(Date.now() - opened < 2500, "cut after the config file's headersTimeout of 1s");
    // Each answer below closes its connection, and the proxy counts a connection gone when its
    // own side has closed, which may come after this process saw it close: until then, a new
    // connection is over the cap of 1 and gets its 503. So each request is sent until the cap
    // lets it in, and its answer is the one checked.
    const admitted = async (url: string, init?: RequestInit) => {
      let status = 0;
      await until(async () => {
        status = (await fetch(url, init)).status;
        return status !== 503;
      }, `${url} let in under the cap`);
      return status;
    };
    assert.equal(await admitted(`${proxy.url}/${'p'.repeat(100)}`), 414);
    assert.equal(await admitted(proxy.url, { headers: { 'x-big': 'a'.repeat(5000) } }), 431);
    assert.equal(await admitted(`${proxy.url}/${'p'.repeat(90)}`), 200);
  } finally {
    held.destroy();
    proxy.child.kill('SIGTERM');
    await once(proxy.child, 'exit');
    up.server.close();
  }
});

test('SIGTERM: no new connections, requests in progress finish, then exit 0', async () => {
  let arrived = () => {};
  const reached = new Promise<void>((resolve) => {
    arrived = resolve;
  });
  const upstream = await listen((_req, res) => {
    arrived();
    setTimeout(() => res.end('finished'), 400);
  });
  const proxy = await start(['--upstream', upstream.url, '--listen', '0', '--grace', '5s']);
  try {
    const slow = fetch(proxy.url).then(async (r) => [r.status, await r.text()]);
    await reached;
    proxy.child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 100));
    // The listener is closed: a new connection is refused while the slow request goes on.
    const refused = await new Promise<string>((resolve) => {
      const req = request(proxy.url, { agent: false }, () => resolve('answered'));
      req.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'error'));
      req.end();
    });
    assert.equal(refused, 'ECONNREFUSED');
    assert.deepEqual(await slow, [200, 'finished']);
    const [code] = await once(proxy.child, 'exit');
    assert.equal(code, 0);
    assert.match(
      proxy.out(),
      /SIGTERM: no new connections; 1 requests in progress have 5000 ms\n.*stopped\n$/s,
    );
  } finally {
    proxy.child.kill('SIGKILL');
    upstream.server.closeAllConnections();
    upstream.server.close();
  }
});

test('SIGTERM: a request past the grace deadline is cut, and the proxy still exits', async () => {
  let arrived = () => {};
  const reached = new Promise<void>((resolve) => {
    arrived = resolve;
  });
  const upstream = await listen(() => arrived()); // never answers
  const proxy = await start(['--upstream', upstream.url, '--listen', '0', '--grace', '200ms']);
  try {
    const cut = fetch(proxy.url).then(
      () => 'answered',
      () => 'cut',
    );
    await reached;
    proxy.child.kill('SIGTERM');
    const [code] = await once(proxy.child, 'exit');
    assert.equal(code, 0);
    assert.equal(await cut, 'cut');
  } finally {
    proxy.child.kill('SIGKILL');
    upstream.server.closeAllConnections();
    upstream.server.close();
  }
});

test('--demo (what npm start runs): the printed burst answers 429, the status page is up', async () => {
  const proxy = await start(['--demo', '--listen', '0', '--admin', '0']);
  try {
    assert.match(proxy.out(), /for i in \$\(seq 15\); do curl .*; done; echo/);
    const statuses = [];
    for (let i = 0; i < 15; i++) statuses.push((await fetch(`${proxy.url}/`)).status);
    assert.ok(statuses.includes(429), statuses.join(' '));
    assert.equal(statuses[0], 200);
    const status = (await (await fetch(`${proxy.admin}/status`)).json()) as {
      requests: { rate_limited: number };
    };
    assert.ok(status.requests.rate_limited >= 1);
  } finally {
    proxy.child.kill('SIGTERM');
    await once(proxy.child, 'exit');
  }
});

test("the proxy guide's config file example is one the proxy takes, and limits as it says", async () => {
  const block = /```json\n([\s\S]*?)```/.exec(readFileSync(GUIDE, 'utf8'))?.[1];
  assert.ok(block !== undefined, 'the proxy guide has a JSON config example');
  const upstream = await listen((_req, res) => res.end('ok'));
  const config = JSON.parse(block);
  Object.assign(config, { upstream: upstream.url, listen: '0', admin: '0' });
  const file = join(mkdtempSync(join(tmpdir(), 'hotcount-proxy-')), 'proxy.json');
  writeFileSync(file, JSON.stringify(config));
  const proxy = await start(['--config', file]);
  try {
    assert.match(proxy.out(), /limit "login": 5 per 60000 ms per ip, under \/login/);
    const login = [];
    for (let i = 0; i < 3; i++) login.push((await fetch(`${proxy.url}/login`)).status);
    assert.deepEqual(login, [200, 200, 429], 'gcra with burst 2');
    const metrics = await (await fetch(`${proxy.admin}/metrics`)).text();
    assert.match(metrics, /hotcount_sketch_memory_bytes\{limit="api"\} \d+/);
  } finally {
    proxy.child.kill('SIGTERM');
    await once(proxy.child, 'exit');
    upstream.server.close();
  }
});

/** The words after `proxy` in `line`, with --upstream, --listen and --admin made local. */
function proxyArgs(line: string, upstream: string): string[] {
  const words = line.trim().split(/\s+/);
  const args = words.slice(words.indexOf('proxy') + 1);
  const local: Record<string, string> = { '--upstream': upstream, '--listen': '0', '--admin': '0' };
  return args.map((word, i) => local[args[i - 1]] ?? word);
}

test("the proxy guide's systemd unit and container command run the proxy as they say", async () => {
  const readme = readFileSync(GUIDE, 'utf8');
  const unit = /```ini\n([\s\S]*?)```/.exec(readme)?.[1] ?? '';
  const execStart = /^ExecStart=(.*)$/m.exec(unit)?.[1] ?? '';
  assert.ok(execStart.includes('build/src/cli/main.js proxy'), 'the unit runs the proxy');
  const stopS = Number(/^TimeoutStopSec=(\d+)s$/m.exec(unit)?.[1]);
  const graceS = Number(/--grace (\d+)s/.exec(execStart)?.[1]);
  assert.ok(stopS > graceS, `systemd waits ${stopS} s, longer than the grace of ${graceS} s`);
  const docker = (/```sh\n(docker run[\s\S]*?)```/.exec(readme)?.[1] ?? '').replace(/\\\n/g, ' ');
  assert.ok(docker.includes(' proxy '), 'the container runs the proxy');
  const upstream = await listen((_req, res) => res.end('ok'));
  try {
    for (const line of [execStart, docker]) {
      const proxy = await start(proxyArgs(line, upstream.url));
      try {
        assert.equal((await fetch(proxy.url)).status, 200, line);
        const metrics = await (await fetch(`${proxy.admin}/metrics`)).text();
        assert.match(metrics, /hotcount_request_duration_seconds_count 1\n/);
      } finally {
        proxy.child.kill('SIGTERM');
        await once(proxy.child, 'exit');
      }
    }
  } finally {
    upstream.server.close();
  }
});
