/**
 * The servers of the http suite under many clients (issue 12), each in a fresh process keyed
 * by the `x-client` header (http-keys-server.ts), autocannon on loopback:
 *
 * - RSS growth after 1M distinct client keys: the server's resident set after a full
 *   collection, once warmed up on 300k keys of their own, and again after 1M more, one request
 *   each; a bare node:http server beside, for what the load alone grows. One run per server (three with --full): 1M requests through Express take two
 *   minutes.
 * - Key-rotation flood: one hot client, limit 100 per 10 minutes, sends bursts of 200 while an
 *   attacker rotates through 100k keys, 6,000 between two bursts (more than the 5,000 clients of
 *   @fastify/rate-limit's default LRU). What the hot client got through is counted; a run that
 *   would straddle a window of the clock waits for the next one.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import type { KeyCase } from './http-keys-server.js';
import { type BenchOptions, formatBytes, median, type Row } from './measure.js';

const SERVER = fileURLToPath(new URL('./http-keys-server.js', import.meta.url));
const DISTINCT_KEYS = 1_000_000;
/** Requests before the baseline, from clients of their own. */
const WARM_KEYS = 300_000;
/**
 * Every server runs with its young generation at its largest from the start. Otherwise V8 grows
 * it under this load: a bare node:http server's RSS grew 17.2 MiB over the 1M requests (in a
 * side measurement RSS and heapTotal +16.8 MiB, heapUsed +0.0), though it keeps no client.
 */
const FIXED_YOUNG_GENERATION = ['--min-semi-space-size=16', '--max-semi-space-size=16'];
const CONNECTIONS = 50;
const PIPELINING = 10;

const FLOOD_LIMIT = 100;
const FLOOD_WINDOW_MS = 600_000;
const FLOOD_BURST = 200;
const FLOOD_ROTATING = 100_000;
const FLOOD_BETWEEN = 6_000;

interface Started {
  child: ChildProcess;
  port: number;
}

async function start(which: KeyCase, limit: number, windowMs: number): Promise<Started> {
  const child = fork(SERVER, [which, String(limit), String(windowMs)], {
    execArgv: ['--expose-gc', ...FIXED_YOUNG_GENERATION],
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  const [message] = (await once(child, 'message')) as [{ port: number }];
  return { child, port: message.port };
}

async function stop({ child }: Started): Promise<void> {
  child.kill();
  if (child.exitCode === null) await once(child, 'exit');
}

async function memory({ child }: Started): Promise<NodeJS.MemoryUsage> {
  child.send('rss');
  const [message] = (await once(child, 'message')) as [NodeJS.MemoryUsage];
  return message;
}

/**
 * `amount` requests, each from the client `clientOf(i)`; returns the 2xx responses. Pipelined:
 * the order within one call is not kept, which neither measurement needs.
 */
async function send(
  port: number,
  amount: number,
  clientOf: (i: number) => string,
  pipelining = PIPELINING,
): Promise<{ ok: number; refused: number }> {
  let i = 0;
  const result = await autocannon({
    url: `http://127.0.0.1:${port}/`,
    connections: Math.min(CONNECTIONS, amount),
    pipelining,
    amount,
    requests: [
      {
        setupRequest: (request) => {
          request.headers = { ...request.headers, 'x-client': clientOf(i++) };
          return request;
        },
      },
    ],
  });
  if (result.errors > 0) throw new Error(`${result.errors} errors`);
  return { ok: result['2xx'], refused: result.non2xx };
}

/** Growth of the RSS and of the live heap over DISTINCT_KEYS new clients. */
export async function growth(which: KeyCase, run: number): Promise<{ rss: number; heap: number }> {
  // An hour's window: express-rate-limit's MemoryStore drops every client at each window's
  // end, and 1M requests through Express take two minutes.
  const server = await start(which, 1_000_000_000, 3_600_000);
  try {
    await send(server.port, WARM_KEYS, (i) => `warm-${run}-${i}`);
    const before = await memory(server);
    await send(server.port, DISTINCT_KEYS, (i) => `client-${run}-${i}`);
    const after = await memory(server);
    return { rss: after.rss - before.rss, heap: after.heapUsed - before.heapUsed };
  } finally {
    await stop(server);
  }
}

async function flood(which: KeyCase): Promise<number> {
  // A whole flood (well under 2 minutes) within one window of the clock: otherwise the hot
  // client's quota comes back. A flood that straddles one all the same is an error.
  const left = FLOOD_WINDOW_MS - (Date.now() % FLOOD_WINDOW_MS);
  if (left < 120_000) await new Promise((resolve) => setTimeout(resolve, left + 50));
  const window = Math.floor(Date.now() / FLOOD_WINDOW_MS);
  const server = await start(which, FLOOD_LIMIT, FLOOD_WINDOW_MS);
  try {
    let passed = 0;
    let rotated = 0;
    while (rotated < FLOOD_ROTATING) {
      passed += (await send(server.port, FLOOD_BURST, () => 'hot-client', 1)).ok;
      const base = rotated;
      await send(server.port, FLOOD_BETWEEN, (i) => `attacker-${base + i}`);
      rotated += FLOOD_BETWEEN;
    }
    passed += (await send(server.port, FLOOD_BURST, () => 'hot-client', 1)).ok;
    if (Math.floor(Date.now() / FLOOD_WINDOW_MS) !== window) {
      throw new Error(`${which}: the flood straddled a window of the clock`);
    }
    return passed;
  } finally {
    await stop(server);
  }
}

const HOTCOUNT: KeyCase[] = [
  'node:http + rateLimit',
  'express + rateLimit',
  'fastify + hotcount plugin',
  'koa + rateLimit',
  'hono + rateLimit',
  'nest + SketchThrottlerStorage',
];
const PEERS: KeyCase[] = [
  'node:http',
  'express + express-rate-limit',
  'fastify + @fastify/rate-limit',
  'koa + koa-ratelimit',
  'hono + hono-rate-limiter',
  'nest + ThrottlerStorageService',
  // Where Nest's growth comes from: its guard over a storage that keeps nothing, and Nest alone.
  'nest + a no-op storage',
  'nest',
];
const FLOODED: KeyCase[] = [
  'node:http + rateLimit',
  'fastify + hotcount plugin',
  'koa + rateLimit',
  'hono + rateLimit',
  'nest + SketchThrottlerStorage',
  'express + express-rate-limit',
  'fastify + @fastify/rate-limit',
  'koa + koa-ratelimit',
  'hono + hono-rate-limiter',
  'nest + ThrottlerStorageService',
];

function signed(bytes: number): string {
  return bytes < 0 ? `-${formatBytes(-bytes)}` : `+${formatBytes(bytes)}`;
}

export async function httpKeysSuite(options: BenchOptions): Promise<Row[]> {
  const runs = options.full ? 3 : 1;
  options.log(
    `  http-keys: RSS growth over ${DISTINCT_KEYS} distinct clients (${runs} run${runs > 1 ? 's' : ''} per server), then the key-rotation flood`,
  );
  const grown = new Map<KeyCase, { rss: number; heap: number }[]>();
  for (let run = 0; run < runs; run++) {
    for (const which of [...HOTCOUNT, ...PEERS]) {
      const bytes = await growth(which, run);
      grown.set(which, [...(grown.get(which) ?? []), bytes]);
      options.log(
        `    run ${run + 1}/${runs}: ${which} RSS ${signed(bytes.rss)}, heap ${signed(bytes.heap)}`,
      );
    }
  }
  const of = (which: KeyCase) => median((grown.get(which) ?? []).map((g) => g.rss));
  const heapOf = (which: KeyCase) => median((grown.get(which) ?? []).map((g) => g.heap));
  const describe = (w: KeyCase) => `${w} ${signed(of(w))} (heap ${signed(heapOf(w))})`;
  const worst = Math.max(...HOTCOUNT.map(of));
  const rows: Row[] = [
    {
      case: `12.3 RSS growth of each server after ${DISTINCT_KEYS / 1e6}M distinct client keys (hotcount)`,
      measured: `at most ${signed(worst)} RSS (${HOTCOUNT.map(describe).join('; ')}; ${runs === 1 ? 'one run each' : `median of ${runs}`})`,
      target: '<= 8 MiB',
      met: worst <= 8 * 1024 * 1024,
    },
    {
      case: '12.3 the same, the peers (memory stores) and a bare node:http server',
      measured: PEERS.map(describe).join('; '),
      target: 'report only',
      met: null,
    },
  ];
  const passed = new Map<KeyCase, number>();
  for (const which of FLOODED) {
    passed.set(which, await flood(which));
    options.log(`    flood: ${which} let the hot client through ${passed.get(which)} times`);
  }
  const bursts = Math.ceil(FLOOD_ROTATING / FLOOD_BETWEEN) + 1;
  const hotcountWorst = Math.max(
    ...FLOODED.filter((w) => HOTCOUNT.includes(w)).map((w) => passed.get(w) ?? Number.NaN),
  );
  rows.push({
    case: `12.4 key-rotation flood: ${FLOOD_ROTATING / 1000}k rotating keys, ${bursts} bursts of ${FLOOD_BURST} from one hot client, limit ${FLOOD_LIMIT} per 10 min`,
    measured: `hot client passed ${FLOODED.map((w) => `${passed.get(w)} times through ${w}`).join('; ')}`,
    target: `hotcount <= ${FLOOD_LIMIT}`,
    met: hotcountWorst <= FLOOD_LIMIT,
  });
  return rows;
}
