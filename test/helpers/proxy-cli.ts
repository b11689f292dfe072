/** `hotcount proxy` as a child process, for the tests that run the command itself. */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const MAIN = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));

/** Runs `hotcount proxy args` to its end. */
export function runProxy(args: string[], env: NodeJS.ProcessEnv = process.env) {
  return spawnSync(process.execPath, [MAIN, 'proxy', ...args], { encoding: 'utf8', env });
}

/** Starts `hotcount proxy args`; resolves once it prints its URLs. */
export async function startProxy(
  args: string[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ child: ChildProcess; url: string; admin: string | null; out: () => string }> {
  const child = spawn(process.execPath, [MAIN, 'proxy', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env,
  });
  let out = '';
  child.stdout?.on('data', (chunk) => {
    out += chunk;
  });
  child.stderr?.on('data', (chunk) => {
    out += chunk;
  });
  while (
    !/^hotcount proxy: (http:\S+)/m.test(out) ||
    (args.includes('--admin') && !/status page/.test(out))
  ) {
    if (child.exitCode !== null) throw new Error(`the proxy exited: ${out}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  const url = /^hotcount proxy: (http:\S+)/m.exec(out)?.[1] as string;
  const admin = /status page: (http:\/\/[^/\s]+)/.exec(out)?.[1] ?? null;
  return { child, url, admin, out: () => out };
}
