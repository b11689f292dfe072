/**
 * The limiting proxy against the proxies a Node user already runs (issue 21): the upstream
 * directly, `hotcount proxy` with limits (rate and inflight, far above the load),
 * node-http-proxy on a keep-alive agent, and @fastify/http-proxy, each in a process of its own
 * with an upstream of its own (proxy-server.ts), autocannon on loopback in this process.
 *
 * Rounds interleave the cases (the order turns each round, so that a slow patch of the shared
 * machine falls on each in turn); a ratio is taken within a round, and the median of the
 * rounds' is reported. Scenarios: `hello` at once, a 64 KiB body each way, a slow upstream
 * (10 ms a response), and the slow upstream under 512 client connections, where what counts is
 * how many connections each proxy opens to the upstream. Then the forwarders the proxy was
 * chosen from, bare, and the proxy with and without its limits.
 */
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { SERVER_DEFAULTS } from '../src/proxy/limiting-proxy.js';
import { loadRatioRow, type Load as RequestsLoad } from './load-rows.js';
import { type BenchOptions, median, type Row } from './measure.js';
import { BODY_BYTES, type ProxyCase } from './proxy-server.js';
import { cpuOf, type ServerProcess, startServer, stopServer } from './server-process.js';

const SERVER = fileURLToPath(new URL('./proxy-server.js', import.meta.url));
const ROUNDS = 3;
const DURATION_S = 4;
const CONNECTIONS = 32;

type Forwarder = Exclude<ProxyCase, `upstream${string}`> | 'direct';

interface Scenario {
  name: string;
  upstream: ProxyCase;
  connections: number;
  body?: Buffer;
}

interface Load extends RequestsLoad {
  /** Connections the upstream saw: opened in all, and open at once at most. */
  opened: number;
  peak: number;
  /** CPU microseconds per request: autocannon (this process), the upstream, the proxy. */
  cpuUs: { client: number; upstream: number; proxy: number };
}

function start(which: ProxyCase, upstream?: string): Promise<ServerProcess> {
  return startServer(SERVER, upstream === undefined ? [which] : [which, upstream]);
}

async function load(forwarder: Forwarder, scenario: Scenario): Promise<Load> {
  const upstream = await start(scenario.upstream);
  const proxy =
    forwarder === 'direct' ? null : await start(forwarder, `http://127.0.0.1:${upstream.port}`);
  try {
    const options = {
      url: `http://127.0.0.1:${(proxy ?? upstream).port}/`,
      connections: scenario.connections,
      ...(scenario.body === undefined
        ? {}
        : {
            method: 'POST' as const,
            body: scenario.body,
            headers: { 'content-type': 'text/plain' },
          }),
    };
    // A short warm-up, so that each process runs optimized code when measured.
    await autocannon({ ...options, duration: 1 });
    const processes = proxy === null ? [upstream] : [upstream, proxy];
    const before = await Promise.all(processes.map(cpuOf));
    const client = process.cpuUsage();
    const result = await autocannon({ ...options, duration: DURATION_S });
    const clientUsed = process.cpuUsage(client);
    const after = await Promise.all(processes.map(cpuOf));
    const perRequest = (us: number) => us / result.requests.total;
    if (result.non2xx > 0 || result.errors > 0 || result.timeouts > 0) {
      throw new Error(
        `${forwarder}, ${scenario.name}: ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts`,
      );
    }
    if (proxy !== null) await stopServer(proxy);
    await stopServer(upstream);
    const seen = JSON.parse(upstream.lines.at(-1) ?? '{}') as { opened: number; peak: number };
    return {
      rps: result.requests.average,
      p50: result.latency.p50,
      p99: result.latency.p99,
      opened: seen.opened,
      peak: seen.peak,
      cpuUs: {
        client: perRequest(clientUsed.user + clientUsed.system),
        upstream: perRequest(after[0] - before[0]),
        proxy: proxy === null ? 0 : perRequest(after[1] - before[1]),
      },
    };
  } finally {
    if (proxy !== null) await stopServer(proxy);
    await stopServer(upstream);
  }
}

/** Every forwarder under `scenario`, `ROUNDS` interleaved rounds. */
async function rounds(
  options: BenchOptions,
  scenario: Scenario,
  forwarders: readonly Forwarder[],
): Promise<Map<Forwarder, Load[]>> {
  const loads = new Map<Forwarder, Load[]>(forwarders.map((f) => [f, []]));
  for (let round = 0; round < ROUNDS; round++) {
    const order = forwarders.map((_, i) => forwarders[(i + round) % forwarders.length]);
    for (const forwarder of order) loads.get(forwarder)?.push(await load(forwarder, scenario));
    options.log(
      `    ${scenario.name}, round ${round + 1}/${ROUNDS}: ${forwarders
        .map((f) => `${f} ${loads.get(f)?.[round].rps.toFixed(0)}`)
        .join(', ')} req/s`,
    );
  }
  return loads;
}

const of = (loads: Map<Forwarder, Load[]>, f: Forwarder, pick: (load: Load) => number) =>
  median((loads.get(f) ?? []).map(pick));

function ratioRow(
  loads: Map<Forwarder, Load[]>,
  a: Forwarder,
  b: Forwarder,
  caseName: string,
  target: number | null,
): Row {
  const of = (f: Forwarder) => [f, loads.get(f) ?? []] as const;
  return loadRatioRow(caseName, of(a), of(b), target, 'rounds');
}

/**
 * Where the CPU goes, per request: what bounds a proxy's share of the upstream's requests/s on
 * a machine whose cores every process shares. With C cores kept busy, direct runs at about
 * C / (client + upstream) and a proxy at C / (client + upstream + proxy).
 */
function cpuRow(loads: Map<Forwarder, Load[]>): Row {
  const us = (f: Forwarder, part: keyof Load['cpuUs']) =>
    of(loads, f, (l) => l.cpuUs[part]).toFixed(1);
  const direct = `direct: client ${us('direct', 'client')}, upstream ${us('direct', 'upstream')}`;
  const proxied = [HOTCOUNT, ...PEERS].map(
    (f) =>
      `${f}: client ${us(f, 'client')}, upstream ${us(f, 'upstream')}, proxy ${us(f, 'proxy')}`,
  );
  return {
    case: '21.3b CPU microseconds per request, each process (medians of the rounds)',
    measured: [direct, ...proxied].join('; '),
    target: 'report only',
    met: null,
  };
}

const HOTCOUNT: Forwarder = 'hotcount proxy + limits';
const PEERS: Forwarder[] = ['http-proxy', '@fastify/http-proxy'];

/** Rows `<number>a`, `<number>b`: hotcount against each peer under one scenario, report only. */
function againstPeers(loads: Map<Forwarder, Load[]>, number: string, scenario: string): Row[] {
  return PEERS.map((peer, i) =>
    ratioRow(loads, HOTCOUNT, peer, `${number}${'ab'[i]} ${scenario}: hotcount vs ${peer}`, null),
  );
}

export async function proxySuite(options: BenchOptions): Promise<Row[]> {
  options.log(
    `  proxy: autocannon, ${CONNECTIONS} connections, ${DURATION_S} s a run, ${ROUNDS} interleaved rounds`,
  );
  const rows: Row[] = [];
  const hello = await rounds(
    options,
    { name: 'hello', upstream: 'upstream', connections: CONNECTIONS },
    ['direct', HOTCOUNT, ...PEERS],
  );
  rows.push(
    ratioRow(
      hello,
      HOTCOUNT,
      'http-proxy',
      '21.1 hotcount proxy with limits vs node-http-proxy (keep-alive agent)',
      1.3,
    ),
    ratioRow(
      hello,
      HOTCOUNT,
      '@fastify/http-proxy',
      '21.2 hotcount proxy with limits vs @fastify/http-proxy',
      1.0,
    ),
    ratioRow(
      hello,
      HOTCOUNT,
      'direct',
      '21.3 hotcount proxy with limits vs the upstream directly',
      0.5,
    ),
  );
  rows.push(cpuRow(hello));
  const p99 = of(hello, HOTCOUNT, (l) => l.p99);
  const peersP99 = PEERS.map((f) => of(hello, f, (l) => l.p99));
  rows.push({
    case: '21.4 p99 latency: hotcount proxy with limits vs either peer',
    measured: `hotcount ${p99} ms; ${PEERS.map((f, i) => `${f} ${peersP99[i]} ms`).join('; ')} (medians of the rounds)`,
    target: 'no worse than either',
    met: peersP99.every((peer) => p99 <= peer),
  });

  const body = await rounds(
    options,
    {
      name: '64 KiB each way',
      upstream: 'upstream 64 KiB',
      connections: CONNECTIONS,
      body: Buffer.alloc(BODY_BYTES, 0x62),
    },
    ['direct', HOTCOUNT, ...PEERS],
  );
  rows.push(...againstPeers(body, '21.5', '64 KiB body each way'));
  rows.push(
    ratioRow(
      body,
      HOTCOUNT,
      'direct',
      '21.5c 64 KiB body each way: hotcount vs the upstream directly',
      null,
    ),
  );

  const slow = await rounds(
    options,
    { name: 'slow upstream (10 ms)', upstream: 'upstream slow', connections: CONNECTIONS },
    [HOTCOUNT, ...PEERS],
  );
  rows.push(...againstPeers(slow, '21.6', 'slow upstream (10 ms)'));

  const crowd = 512;
  const crowded = await rounds(
    options,
    { name: `slow upstream, ${crowd} clients`, upstream: 'upstream slow', connections: crowd },
    [HOTCOUNT, ...PEERS],
  );
  const peak = (f: Forwarder) => of(crowded, f, (l) => l.peak);
  const cap = SERVER_DEFAULTS.upstreamConnections;
  rows.push({
    case: `21.7 slow upstream, ${crowd} client connections: connections open to the upstream at once`,
    measured: [HOTCOUNT, ...PEERS]
      .map(
        (f) =>
          `${f} ${peak(f)} (${of(crowded, f, (l) => l.rps).toFixed(0)} req/s, p99 ${of(crowded, f, (l) => l.p99)} ms)`,
      )
      .join('; '),
    target: `hotcount <= upstreamConnections (${cap})`,
    met: peak(HOTCOUNT) <= cap,
  });

  const bare: Forwarder[] = [
    'bare http.request',
    'bare undici request',
    'bare undici dispatch',
    'hotcount proxy',
    HOTCOUNT,
  ];
  const forwarders = await rounds(
    options,
    { name: 'forwarders', upstream: 'upstream', connections: CONNECTIONS },
    bare,
  );
  for (const f of bare.slice(1)) {
    rows.push(
      ratioRow(
        forwarders,
        f,
        'bare http.request',
        `21.8 ${f} vs bare http.request (keep-alive agent)`,
        null,
      ),
    );
  }
  rows.push(
    ratioRow(
      forwarders,
      HOTCOUNT,
      'hotcount proxy',
      '21.9 hotcount proxy with limits vs without',
      0.9,
    ),
  );
  return rows;
}
