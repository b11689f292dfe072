/**
 * Real Redis servers for the tests: Debian's redis-server on a free loopback port, with a data
 * folder of its own, started and stopped (or killed, paused, restarted) by the test.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';

async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, 'close');
  return port;
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
    const port = await freePort();
    const args = ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', ''];
    const server = new RedisServer(port, dir, [...args, ...extra]);
    await server.run();
    return server;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** A client of this server; the caller quits it. */
  client(): Redis {
    return new Redis(this.port, '127.0.0.1', { lazyConnect: false, maxRetriesPerRequest: 1 });
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

  /** Starts it again, on the same port and data folder. */
  async restart(): Promise<void> {
    await this.stop();
    await this.run();
  }
}
