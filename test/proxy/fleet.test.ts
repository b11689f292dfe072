import assert from 'node:assert/strict';
import { once } from 'node:events';
import { request } from 'node:http';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { listen } from '../helpers/http.js';
import { runProxy, startProxy } from '../helpers/proxy-cli.js';
import { RedisServer } from '../helpers/redis.js';
import { until } from '../helpers/until.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function get(url: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode as number));
    });
    req.on('error', reject);
    req.end();
  });
}

const env = { ...process.env, HOTCOUNT_SECRET: 'the fleet shares this secret' };
/** The proxy's environment in a project that has not installed the client libraries `hidden`. */
const without = (...hidden: string[]) => ({
  ...env,
  NODE_OPTIONS: `--import ${fileURLToPath(new URL('../helpers/hide-modules.js', import.meta.url))}`,
  HOTCOUNT_HIDE_MODULES: hidden.join(','),
});

test('--redis needs the fleet secret, refuses gcra, and names a bad URL', () => {
  const bare = { ...process.env };
  delete bare.HOTCOUNT_SECRET;
  const args = ['--upstream', 'http://127.0.0.1:1', '--rate', '5/1s'];
  const missing = runProxy([...args, '--redis', 'redis://127.0.0.1:6379'], bare);
  assert.equal(missing.status, 2);
  assert.match(missing.stderr, /HOTCOUNT_SECRET/);
  const url = runProxy([...args, '--redis', 'localhost'], env);
  assert.equal(url.status, 2);
  assert.match(url.stderr, /--redis must be a URL/);
  const sync = runProxy([...args, '--sync', '10ms'], env);
  assert.equal(sync.status, 2);
  assert.match(sync.stderr, /--sync needs --redis/);
  const long = runProxy([...args, '--redis', 'redis://127.0.0.1:1', '--sync', '2h'], env);
  assert.equal(long.status, 2);
  assert.match(long.stderr, /--sync must be at most 1h/);
  const none = runProxy(
    [...args, '--redis', 'redis://127.0.0.1:1'],
    without('ioredis', 'redis', 'iovalkey'),
  );
  assert.equal(none.status, 1);
  assert.match(none.stderr, /--redis needs a Redis client: npm install ioredis \(or redis/);
});

test('two proxies with --redis, one through ioredis and one through node-redis, hold one global limit per key, within the stated overshoot bound', async (t) => {
  const redis = await RedisServer.start();
  const upstream = await listen((_req, res) => res.end('ok'));
  const limit = 40;
  const windowMs = 4000;
  const syncMs = 50;
  const args = [
    '--upstream',
    upstream.url,
    '--listen',
    '0',
    '--rate',
    `${limit}/${windowMs}ms`,
    '--key',
    'header:x-api-key',
    '--redis',
    redis.url,
    '--sync',
    `${syncMs}ms`,
  ];
  // A fleet of mixed clients: the second proxy's project has node-redis and no ioredis.
  const proxies = [await startProxy(args, env), await startProxy(args, without('ioredis'))];
  assert.match(proxies[0].out(), /limits shared through \S+ \(sync every 50 ms, with ioredis\)/);
  assert.match(proxies[1].out(), /limits shared through \S+ \(sync every 50 ms, with redis\)/);
  const client = redis.ioredis();
  try {
    // One aligned window for the whole run: start just after a boundary.
    while (Date.now() % windowMs > 100) await sleep(10);
    const window = Math.floor(Date.now() / windowMs);
    const headers = { 'x-api-key': `customer-${process.pid}` };
    const sent = [0, 0];
    const passed = [0, 0];
    const started = Date.now();
    // Each proxy sees about 100 requests a second for the key; two unshared proxies would
    // pass 2 * limit between them.
    await Promise.all(
      proxies.map(async (proxy, i) => {
        while (Date.now() - started < 3000) {
          const status = await get(`${proxy.url}/`, headers);
          assert.ok(status === 200 || status === 429, `status ${status}`);
          sent[i]++;
          if (status === 200) passed[i]++;
          await sleep(10);
        }
      }),
    );
    const elapsedS = (Date.now() - started) / 1000;
    assert.equal(Math.floor(Date.now() / windowMs), window, 'the run stayed in one window');
    // The bound (docs/redis.md): each other process may have passed what it saw in 2 * syncMs plus a
    // round trip, at its own rate r: (P - 1) * r * (2 * syncMs + RTT).
    const pingStarted = performance.now();
    await client.ping();
    const rttMs = performance.now() - pingStarted;
    const rate = Math.max(...sent) / elapsedS;
    const bound = Math.ceil(rate * ((2 * syncMs + rttMs) / 1000));
    const total = passed[0] + passed[1];
    t.diagnostic(
      `passed ${total} (${passed.join(' + ')}) of ${sent[0] + sent[1]}; limit ${limit}, bound +${bound} at r ${rate.toFixed(0)}/s`,
    );
    assert.ok(total >= limit, `the fleet passed ${total}, below the limit ${limit}`);
    assert.ok(
      total <= limit + bound,
      `the fleet passed ${total} (${passed.join(' + ')}): over ${limit} + ${bound} (r ${rate.toFixed(0)}/s)`,
    );
    assert.ok(total < 2 * limit, `the fleet passed ${total}: as if nothing were shared`);
  } finally {
    for (const proxy of proxies) {
      proxy.child.kill('SIGTERM');
      await once(proxy.child, 'exit');
    }
    client.disconnect();
    upstream.server.close();
    await redis.stop();
  }
});

test('two proxies with --redis share an inflight limit: requests in progress at one count at the other', async () => {
  const redis = await RedisServer.start();
  // An upstream that holds every request until the test lets them go.
  const waiting: (() => void)[] = [];
  const upstream = await listen((_req, res) => waiting.push(() => res.end('ok')));
  const limit = 3;
  const args = [
    '--upstream',
    upstream.url,
    '--listen',
    '0',
    '--inflight',
    String(limit),
    '--key',
    'header:x-api-key',
    '--redis',
    redis.url,
    '--sync',
    '50ms',
  ];
  const first = await startProxy(args, env);
  const second = await startProxy([...args, '--admin', '0'], env);
  const inProgress = async () => {
    const status = (await (await fetch(`${second.admin}/status`)).json()) as {
      limits: { inflight: { inProgress: number } }[];
    };
    return status.limits[0].inflight.inProgress;
  };
  const headers = { 'x-api-key': `customer-${process.pid}` };
  try {
    const held = Array.from({ length: limit }, () => get(`${first.url}/`, headers));
    await until(() => waiting.length === limit, "the upstream holding the first proxy's requests");
    await until(async () => (await inProgress()) === limit, 'the second proxy seeing them');
    // The fleet holds the limit: the second proxy refuses the key, and other keys pass.
    assert.equal(await get(`${second.url}/`, headers), 503);
    const other = get(`${second.url}/`, { 'x-api-key': 'another customer' });
    await until(() => waiting.length === limit + 1, 'another key passing');
    for (const done of waiting.splice(0)) done();
    assert.deepEqual(await Promise.all([...held, other]), [200, 200, 200, 200]);
    // Released at the first proxy, given back to the fleet: the key passes at the second again.
    await until(async () => (await inProgress()) === 0, 'the fleet count back to 0');
    const again = get(`${second.url}/`, headers);
    await until(() => waiting.length === 1, 'the key passing again');
    for (const done of waiting.splice(0)) done();
    assert.equal(await again, 200);
  } finally {
    for (const done of waiting.splice(0)) done();
    for (const proxy of [first, second]) {
      proxy.child.kill('SIGTERM');
      await once(proxy.child, 'exit');
    }
    upstream.server.close();
    await redis.stop();
  }
});
