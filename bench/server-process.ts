/**
 * A server of a bench suite in a process of its own (so that autocannon, in the suite's
 * process, shares no event loop with it): it prints `{ "port": N }` once listening; whatever it
 * prints after is kept, line by line.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';

export interface ServerProcess {
  child: ChildProcess;
  port: number;
  /** Lines the process printed after its port. */
  lines: string[];
}

/**
 * Starts `node script ...args` (or `runtime script ...args`: another Node, Bun); resolves once
 * it says its port.
 */
export async function startServer(
  script: string,
  args: string[],
  runtime = process.execPath,
): Promise<ServerProcess> {
  const child = spawn(runtime, [script, ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const stdout = child.stdout as NonNullable<typeof child.stdout>;
  const [chunk] = (await once(stdout, 'data')) as [Buffer];
  const lines: string[] = [];
  stdout.on('data', (more: Buffer) => lines.push(...more.toString().split('\n').filter(Boolean)));
  return { child, port: (JSON.parse(chunk.toString()) as { port: number }).port, lines };
}

/** SIGTERM, and the exit awaited. */
export async function stopServer(server: ServerProcess): Promise<void> {
  if (server.child.exitCode !== null) return;
  server.child.kill('SIGTERM');
  await once(server.child, 'exit');
}

/** The CPU microseconds `server` has used so far (its SIGUSR2 answer, proxy-server.ts). */
export async function cpuOf(server: ServerProcess): Promise<number> {
  const stdout = server.child.stdout as NonNullable<ServerProcess['child']['stdout']>;
  const answered = once(stdout, 'data');
  server.child.kill('SIGUSR2');
  await answered;
  // The 'data' listener of startServer ran first: the answer is the last line.
  const line = server.lines.at(-1) ?? '{}';
  return (JSON.parse(line) as { cpuUs: number }).cpuUs;
}
