/**
 * The fleet's rows of the redis suite (issue 13), against the suite's redis-server:
 *
 * - 13.5 Redis commands per second under local-first limiters: 1, 2 and 4 processes
 *   (redis-fleet-child.ts) sharing 100k checks per second, syncMs 50, and 2 processes at a tenth
 *   of the load; commands counted by the server (INFO total_commands_processed) over 3 s.
 * - 13.6 two `hotcount proxy --redis` processes in front of one upstream, autocannon on each with
 *   one client key, inside one aligned window: what the fleet let through against the limit and
 *   docs/redis.md's overshoot bound, (P - 1) * r * (2 * syncMs + RTT).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { listen } from '../test/helpers/http.js';
import { startProxy } from '../test/helpers/proxy-cli.js';
import type { RedisServer } from '../test/helpers/redis.js';
import type { BenchOptions, Row } from './measure.js';

const CHILD = fileURLToPath(new URL('./redis-fleet-child.js', import.meta.url));
const SYNC_MS = 50;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Commands the server ran: in all (the commands scripts run inside included), and the scripts
 * the clients sent (EVALSHA and EVAL: one per sync, the round trips).
 */
async function commandsProcessed(server: RedisServer): Promise<{ all: number; scripts: number }> {
  const client = server.ioredis();
  try {
    const all = Number(/total_commands_processed:(\d+)/.exec(await client.info('stats'))?.[1]);
    const stats = await client.info('commandstats');
    const calls = (name: string) =>
      Number(new RegExp(`cmdstat_${name}:calls=(\\d+)`).exec(stats)?.[1] ?? 0);
    return { all, scripts: calls('evalsha') + calls('eval') };
  } finally {
    client.disconnect();
  }
}

/** Redis commands per second while `processes` children share `checksPerSecond`. */
async function commandsPerSecond(server: RedisServer, processes: number, checksPerSecond: number) {
  const children: ChildProcess[] = [];
  const outputs: string[] = [];
  for (let i = 0; i < processes; i++) {
    const child = spawn(
      process.execPath,
      [
        CHILD,
        String(server.port),
        `fleet-${processes}-${checksPerSecond}`,
        String(checksPerSecond / processes),
        '5000',
        String(SYNC_MS),
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let out = '';
    child.stdout?.on('data', (chunk) => {
      out += chunk;
      outputs[i] = out;
    });
    children.push(child);
  }
  while (outputs.filter((out) => out?.includes('ready')).length < processes) await sleep(20);
  await sleep(1000);
  // Each sample opens a client: HELLO/INFO of its own, a handful of commands, subtracted below.
  const before = await commandsProcessed(server);
  const started = Date.now();
  await sleep(3000);
  const after = await commandsProcessed(server);
  const seconds = (Date.now() - started) / 1000;
  await Promise.all(children.map((child) => once(child, 'exit')));
  const checks = outputs
    .map((out) => Number(/checks\/s (\d+)/.exec(out)?.[1] ?? 0))
    .reduce((a, b) => a + b, 0);
  return {
    commands: (after.all - before.all) / seconds,
    scripts: (after.scripts - before.scripts) / seconds,
    checks,
  };
}

async function twoProxies(server: RedisServer, log: (line: string) => void) {
  const upstream = await listen((_req, res) => res.end('ok'));
  const limit = 1000;
  const windowMs = 10_000;
  const env = { ...process.env, HOTCOUNT_SECRET: 'the bench fleet shares this secret' };
  const args = [
    ...['--upstream', upstream.url, '--listen', '0', '--rate', `${limit}/${windowMs}ms`],
    ...['--key', 'header:x-api-key', '--redis', server.url, '--sync', `${SYNC_MS}ms`],
  ];
  const proxies = [await startProxy(args, env), await startProxy(args, env)];
  try {
    while (Date.now() % windowMs > 200) await sleep(10);
    const window = Math.floor(Date.now() / windowMs);
    const headers = { 'x-api-key': `bench-${Date.now()}` };
    const results = await Promise.all(
      proxies.map((proxy) =>
        autocannon({ url: `${proxy.url}/`, connections: 8, duration: 3, headers }),
      ),
    );
    const inWindow = Math.floor(Date.now() / windowMs) === window;
    const passed = results.map((result) => result['2xx']);
    const rates = results.map((result) => result.requests.average);
    const client = server.ioredis();
    const pingStarted = performance.now();
    await client.ping();
    const rttMs = performance.now() - pingStarted;
    client.disconnect();
    const bound = Math.ceil(Math.max(...rates) * ((2 * SYNC_MS + rttMs) / 1000));
    log(`    two proxies: passed ${passed.join(' + ')} of limit ${limit}; bound +${bound}`);
    return { passed, rates, limit, bound, inWindow };
  } finally {
    for (const proxy of proxies) {
      proxy.child.kill('SIGTERM');
      await once(proxy.child, 'exit');
    }
    upstream.server.close();
  }
}

export async function fleetRows(options: BenchOptions, server: RedisServer): Promise<Row[]> {
  const { log } = options;
  const runs: string[] = [];
  const perProcess: number[] = [];
  for (const [processes, load] of [
    [1, 100_000],
    [2, 100_000],
    [4, 100_000],
    [2, 10_000],
  ]) {
    const { commands, scripts, checks } = await commandsPerSecond(server, processes, load);
    log(
      `    fleet: ${processes} processes, ${checks} checks/s: ${scripts.toFixed(0)} scripts/s, ${commands.toFixed(0)} commands/s in all`,
    );
    runs.push(
      `${processes} process${processes > 1 ? 'es' : ''} at ${checks} checks/s: ${scripts.toFixed(0)} (${commands.toFixed(0)} in all)`,
    );
    perProcess.push(scripts / processes);
  }
  // What the row shows: each process sends at most one script per syncMs, whatever its load
  // (fewer when a sync takes longer than syncMs: one is never started while one is running).
  const bounded = perProcess.every((perSecond) => perSecond <= (1000 / SYNC_MS) * 1.1);
  const two = await twoProxies(server, log);
  const total = two.passed[0] + two.passed[1];
  return [
    {
      case: `13.5 Redis commands/s sent by local-first limiters (scripts: one per sync), syncMs ${SYNC_MS}, 3 s counted by the server; in brackets all commands, those the scripts run inside included`,
      measured: `${runs.join('; ')}; per process: ${perProcess.map((c) => c.toFixed(1)).join(', ')}`,
      target: `reported: depends on processes, not on load (at most ${1000 / SYNC_MS} per process)`,
      met: bounded,
    },
    {
      case: `13.6 global limit across 2 \`hotcount proxy --redis\` processes (syncMs ${SYNC_MS}), autocannon 8 connections each, one key, 3 s in one ${two.limit}-per-10 s window`,
      measured: `passed ${total} (${two.passed.join(' + ')}) of ${Math.round(two.rates[0] * 3 + two.rates[1] * 3)} at ${two.rates.map((r) => r.toFixed(0)).join(' and ')} req/s: limit ${two.limit}, bound +${two.bound}${two.inWindow ? '' : ' (the run crossed a window boundary)'}`,
      target: 'within the stated overshoot bound',
      met: two.inWindow && total <= two.limit + two.bound,
    },
  ];
}
