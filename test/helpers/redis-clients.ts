/**
 * The Redis clients the tests run hotcount/redis with, one kind per run: the Redis suites run
 * once for each (tools/test-redis-clients.mjs sets HOTCOUNT_REDIS_CLIENT; unset, ioredis 5), so
 * every client goes through the same tests. Each kind is made as its users make it, and the
 * behaviours a fault test needs (fail at once while down, a command timeout, wait forever) are
 * asked of each in its own words.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createRequire } from 'node:module';
import { GlideClient, GlideClusterClient, ProtocolVersion } from '@valkey/valkey-glide';
import { Cluster, Redis } from 'ioredis';
import { Cluster as Cluster6, Redis as Redis6 } from 'ioredis6';
import { Valkey, Cluster as ValkeyCluster } from 'iovalkey';
import { createClient, createCluster } from 'redis';
import type { RedisClient } from '../../src/redis/index.js';

/** Each kind: a client library and the protocol it speaks. */
export const CLIENT_KINDS = [
  'ioredis',
  'ioredis6',
  'ioredis6-resp2',
  'iovalkey',
  'node-redis',
  'node-redis-resp3',
  'glide',
  'glide-resp2',
] as const;
export type ClientKind = (typeof CLIENT_KINDS)[number];

function kindOf(value: string | undefined): ClientKind {
  if (value === undefined || value === '') return 'ioredis';
  if (!(CLIENT_KINDS as readonly string[]).includes(value)) {
    throw new Error(`HOTCOUNT_REDIS_CLIENT must be one of ${CLIENT_KINDS.join(', ')}: ${value}`);
  }
  return value as ClientKind;
}

/** The kind this run tests. */
export const clientKind: ClientKind = kindOf(process.env.HOTCOUNT_REDIS_CLIENT);

/** ioredis's major version, as installed. */
const IOREDIS_MAJOR = Number(
  createRequire(import.meta.url)('ioredis/package.json').version.split('.')[0],
);

/**
 * Whether a kind's client runs concurrent commands in the order they were sent. glide does not
 * always (seen in the matrix: a pipeline of 5,000 increments answered out of order): the tests
 * that compare each answer of a pipeline with a model fed in order wait for each with it.
 */
export function keepsOrder(kind: ClientKind): boolean {
  return !kind.startsWith('glide');
}

/**
 * The RESP version a kind speaks. 'ioredis' is ioredis as installed, with its defaults: RESP2 up
 * to 5, RESP3 from 6 (the matrix's newest-peers leg installs 6 under that name).
 */
export function respOf(kind: ClientKind): 2 | 3 {
  if (kind === 'ioredis') return IOREDIS_MAJOR >= 6 ? 3 : 2;
  return kind === 'ioredis6' || kind === 'node-redis-resp3' || kind === 'glide' ? 3 : 2;
}

/**
 * What a fault test needs of a client. Default: a command fails after one retry (ioredis) or
 * waits in the offline queue (node-redis). `failWhenDown`: a command fails at once while the
 * connection is down. `commandTimeoutMs`: a command sent gives up after that long.
 * `waitForever`: a command waits for the connection to come back, however long.
 */
export interface ClientBehaviour {
  failWhenDown?: boolean;
  commandTimeoutMs?: number;
  waitForever?: boolean;
}

/** A client as the tests hold it: what the layer takes. Its error events are listened to. */
export type TestClient = RedisClient;

/** glide's options for a behaviour: its one timeout covers the wait for a connection too. */
function glideOptions(kind: ClientKind, behaviour: ClientBehaviour) {
  return {
    protocol: kind === 'glide' ? ProtocolVersion.RESP3 : ProtocolVersion.RESP2,
    // The tests make thousands of calls at once; glide refuses more than this many in flight.
    inflightRequestsLimit: 100_000,
    requestTimeout:
      behaviour.commandTimeoutMs ??
      (behaviour.waitForever ? 3_600_000 : behaviour.failWhenDown ? 250 : 2000),
  };
}

function ioredisOptions(behaviour: ClientBehaviour): Record<string, unknown> {
  return {
    maxRetriesPerRequest: behaviour.waitForever ? null : behaviour.failWhenDown ? 0 : 1,
    ...(behaviour.failWhenDown ? { enableOfflineQueue: false } : {}),
    ...(behaviour.commandTimeoutMs !== undefined
      ? { commandTimeout: behaviour.commandTimeoutMs }
      : {}),
  };
}

function nodeRedisOptions(kind: ClientKind, behaviour: ClientBehaviour): Record<string, unknown> {
  return {
    RESP: respOf(kind),
    ...(behaviour.failWhenDown ? { disableOfflineQueue: true } : {}),
    ...(behaviour.commandTimeoutMs !== undefined
      ? // rejectInFlight: the timeout holds for a command already sent, as ioredis's does.
        { commandOptions: { timeout: behaviour.commandTimeoutMs, rejectInFlight: true } }
      : {}),
    // Reconnect quickly, as the fault tests restart the server within a second or two.
    socket: { reconnectStrategy: () => 50 },
  };
}

/** A client of the server on `port`, ready; close it with `closeClient`. */
export async function connectClient(
  port: number,
  behaviour: ClientBehaviour = {},
  kind: ClientKind = clientKind,
): Promise<TestClient> {
  const options = ioredisOptions(behaviour);
  switch (kind) {
    case 'ioredis':
      return ready(new Redis(port, '127.0.0.1', options));
    case 'ioredis6':
      return ready(new Redis6(port, '127.0.0.1', { ...options, protocol: 3 }));
    case 'ioredis6-resp2':
      return ready(new Redis6(port, '127.0.0.1', { ...options, protocol: 2 }));
    case 'iovalkey':
      return ready(new Valkey(port, '127.0.0.1', options));
    case 'glide':
    case 'glide-resp2':
      return GlideClient.createClient({
        addresses: [{ host: '127.0.0.1', port }],
        ...glideOptions(kind, behaviour),
      });
    default: {
      const base = nodeRedisOptions(kind, behaviour);
      const client = createClient({
        ...base,
        socket: { ...(base.socket as object), host: '127.0.0.1', port },
      });
      client.on('error', () => {}); // the fault tests' reconnects; tests listen too
      await client.connect();
      return client as unknown as TestClient;
    }
  }
}

/** Waits for an ioredis-shaped client's connection. */
async function ready<T extends { status: string; once(event: string, f: () => void): unknown }>(
  client: T,
): Promise<TestClient> {
  (client as unknown as { on(event: string, f: () => void): unknown }).on('error', () => {});
  if (client.status !== 'ready') {
    await new Promise<void>((resolve) => client.once('ready', resolve));
  }
  return client as unknown as TestClient;
}

/** A cluster client of the masters on `ports`, ready; close it with `closeClient`. */
export async function connectCluster(
  ports: readonly number[],
  kind: ClientKind = clientKind,
): Promise<TestClient> {
  const nodes = ports.map((port) => ({ host: '127.0.0.1', port }));
  const options = { redisOptions: ioredisOptions({}) };
  switch (kind) {
    case 'ioredis':
      return ready(new Cluster(nodes, options));
    case 'ioredis6':
      return ready(new Cluster6(nodes, { redisOptions: { ...options.redisOptions, protocol: 3 } }));
    case 'ioredis6-resp2':
      return ready(new Cluster6(nodes, { redisOptions: { ...options.redisOptions, protocol: 2 } }));
    case 'iovalkey':
      return ready(new ValkeyCluster(nodes, options));
    case 'glide':
    case 'glide-resp2':
      return GlideClusterClient.createClient({ addresses: nodes, ...glideOptions(kind, {}) });
    default: {
      const base = nodeRedisOptions(kind, {});
      const cluster = createCluster({
        rootNodes: ports.map((port) => ({ socket: { host: '127.0.0.1', port } })),
        defaults: base,
        RESP: respOf(kind),
      });
      cluster.on('error', () => {});
      await cluster.connect();
      return cluster as unknown as TestClient;
    }
  }
}

/** Closes a client of any kind at once, dropping what it queued. */
export function closeClient(client: unknown): void {
  const c = client as {
    disconnect?: () => unknown;
    destroy?: () => unknown;
    close?: () => unknown;
    customCommand?: unknown;
  };
  if (typeof (client as { defineCommand?: unknown }).defineCommand === 'function') {
    c.disconnect?.();
  } else if (c.customCommand !== undefined) {
    c.close?.();
  } else {
    c.destroy?.();
  }
}

/**
 * ES module code that makes `redis`, a client of kind `kind` of the server on `port`, in a
 * child process (fleetChild in redis.ts).
 */
function childClientCode(port: number, kind: ClientKind): string {
  switch (kind) {
    case 'ioredis':
    case 'ioredis6':
    case 'ioredis6-resp2': {
      const protocol = kind === 'ioredis' ? '' : `, { protocol: ${respOf(kind)} }`;
      return `import { Redis } from '${kind === 'ioredis' ? 'ioredis' : 'ioredis6'}';
        const redis = new Redis(${port}, '127.0.0.1'${protocol});`;
    }
    case 'iovalkey':
      return `import { Valkey } from 'iovalkey';
        const redis = new Valkey(${port}, '127.0.0.1');`;
    case 'glide':
    case 'glide-resp2':
      return `import { GlideClient } from '@valkey/valkey-glide';
        const redis = await GlideClient.createClient({ addresses: [{ host: '127.0.0.1', port: ${port} }], protocol: ${kind === 'glide' ? 0 : 1}, requestTimeout: 2000 });`;
    default:
      return `import { createClient } from 'redis';
        const redis = createClient({ RESP: ${respOf(kind)}, socket: { host: '127.0.0.1', port: ${port} } });
        await redis.connect();`;
  }
}

/**
 * Another process of the fleet, for the tests that kill one: a node child that runs `body`
 * (ES module code, with `redis` a client of this run's kind of the server on `port` and
 * `hotcount` the hotcount/redis module) and prints 'held'. Resolves once it has; the caller
 * kills it.
 */
export async function fleetChild(port: number, body: string): Promise<ChildProcess> {
  const module = new URL('../../src/redis/index.js', import.meta.url).href;
  const child = spawn(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `${childClientCode(port, clientKind)}
       import * as hotcount from ${JSON.stringify(module)};
       ${body}
       console.log('held');`,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'], cwd: new URL('../../..', import.meta.url).pathname },
  );
  await once(child.stdout as NodeJS.ReadableStream, 'data');
  return child;
}
