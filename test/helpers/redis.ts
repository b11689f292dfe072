/**
 * Real Redis servers for the tests: Debian's redis-server on a free loopback port, with a data
 * folder of its own, started and stopped (or killed, paused, restarted) by the test.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before } from 'node:test';
import { Redis, type RedisOptions } from 'ioredis';
import {
  type ClientBehaviour,
  closeClient,
  connectClient,
  connectCluster,
  type TestClient,
} from './redis-clients.js';

export {
  clientKind,
  closeClient,
  fleetChild,
  keepsOrder,
  type TestClient,
} from './redis-clients.js';

async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, 'close');
  return port;
}

/**
 * One redis-server for a test file's tests, with `count` clients of this run's kind (and an
 * ioredis `inspector` for the tests' own reads of what Redis holds): started before the first test,
 * stopped after the last. Read its fields inside the tests (they are set by then).
 */
export function redisForFile(count: number): {
  server: RedisServer;
  clients: TestClient[];
  inspector: Redis;
} {
  const fixture = { clients: [] as TestClient[] } as {
    server: RedisServer;
    clients: TestClient[];
    inspector: Redis;
  };
  before(async () => {
    fixture.server = await RedisServer.start();
    fixture.clients = await Promise.all(
      Array.from({ length: count }, () => fixture.server.client()),
    );
    fixture.inspector = fixture.server.ioredis();
  });
  after(async () => {
    for (const client of fixture.clients) closeClient(client);
    fixture.inspector.disconnect();
    await fixture.server.stop();
  });
  return fixture;
}

/** Calls `attempt` until it resolves (Redis coming back), polling; the last error if never. */
export async function retried(attempt: () => Promise<unknown>): Promise<void> {
  for (let tries = 0; ; tries++) {
    try {
      await attempt();
      return;
    } catch (error) {
      if (tries > 100) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

export class RedisServer {
  readonly port: number;
  readonly dir: string;
  private child: ChildProcess | null = null;
  private readonly args: string[];

  private constructor(port: number, dir: string, args: string[]) {
    this.port = port;
    this.dir = dir;
    this.args = args;
  }

  /** A server with `extra` arguments (e.g. ['--appendonly', 'yes']); no snapshots by default. */
  static async start(extra: string[] = []): Promise<RedisServer> {
    const dir = mkdtempSync(join(tmpdir(), 'hotcount-redis-'));
    for (let attempt = 1; ; attempt++) {
      const port = await freePort();
      const args = ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', ''];
      const server = new RedisServer(port, dir, [...args, ...extra]);
      try {
        await server.run();
        return server;
      } catch (error) {
        // The port was free when asked, but another test file's server (or a cluster node's bus,
        // at port + 10000) may take it before redis-server binds: another port, a few times.
        if (attempt >= 5 || !/Address already in use/.test((error as Error).message)) throw error;
      }
    }
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** A client of this run's kind (redis-clients.ts), ready; the caller closes it (closeClient). */
  client(behaviour: ClientBehaviour = {}): Promise<TestClient> {
    return connectClient(this.port, behaviour);
  }

  /**
   * An ioredis client, whatever the run's kind: for a test's own reads of what Redis holds (so
   * that what it checks does not depend on the client under test), and for the peers that take
   * only ioredis. The caller disconnects it.
   */
  ioredis(options: RedisOptions = {}): Redis {
    return new Redis(this.port, '127.0.0.1', { maxRetriesPerRequest: 1, ...options });
  }

  private async run(): Promise<void> {
    const child = spawn('redis-server', this.args, { stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    let out = '';
    await new Promise<void>((resolve, reject) => {
      const onData = (chunk: Buffer) => {
        out += chunk;
        if (out.includes('Ready to accept connections')) resolve();
      };
      child.stdout?.on('data', onData);
      child.stderr?.on('data', onData);
      child.once('error', reject);
      child.once('exit', (code) => reject(new Error(`redis-server exited (${code}): ${out}`)));
    });
  }

  /** Stops the server: SIGTERM (a clean shutdown) or SIGKILL. */
  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    const child = this.child;
    if (child === null || child.exitCode !== null) return;
    child.kill(signal);
    await once(child, 'exit');
    this.child = null;
  }

  /** Sends `signal` (SIGSTOP, SIGCONT) without waiting for anything. */
  signal(signal: NodeJS.Signals): void {
    this.child?.kill(signal);
  }

  /** Starts it again, on the same port and data folder. */
  async restart(): Promise<void> {
    await this.stop();
    await this.run();
  }
}

/**
 * A Redis Cluster of `masters` masters (no replicas) on loopback, made as an operator makes
 * one: servers with `--cluster-enabled yes`, joined by `redis-cli --cluster create`.
 */
export class RedisCluster {
  readonly servers: RedisServer[];

  private constructor(servers: RedisServer[]) {
    this.servers = servers;
  }

  static async start(masters = 3): Promise<RedisCluster> {
    const servers: RedisServer[] = [];
    for (let i = 0; i < masters; i++) {
      servers.push(
        await RedisServer.start([
          '--cluster-enabled',
          'yes',
          '--cluster-config-file',
          'nodes.conf',
        ]),
      );
    }
    const nodes = servers.map((server) => `127.0.0.1:${server.port}`);
    const created = spawnSync('redis-cli', ['--cluster', 'create', ...nodes, '--cluster-yes'], {
      encoding: 'utf8',
    });
    if (created.status !== 0) {
      await Promise.all(servers.map((server) => server.stop()));
      throw new Error(`redis-cli --cluster create failed: ${created.stdout}${created.stderr}`);
    }
    const cluster = new RedisCluster(servers);
    // The slots are assigned at once; the nodes agree on them a moment later.
    const client = servers[0].ioredis();
    try {
      for (let tries = 0; ; tries++) {
        const info = (await client.cluster('INFO')) as string;
        if (info.includes('cluster_state:ok')) break;
        if (tries > 100) throw new Error(`the cluster never became ok: ${info}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    } finally {
      client.disconnect();
    }
    return cluster;
  }

  /** A cluster client of this run's kind, ready; the caller closes it (closeClient). */
  client(): Promise<TestClient> {
    return connectCluster(this.servers.map((server) => server.port));
  }

  async stop(): Promise<void> {
    await Promise.all(this.servers.map((server) => server.stop()));
  }
}
