#!/usr/bin/env node
/** The `hotcount` command. Failures: one line on stderr and an exit code by kind (failures.ts). */
import { readFileSync } from 'node:fs';
import { runDemo } from './demo.js';
import { InputError, reason, UsageError } from './failures.js';
import { parseTopArgs, runTop, TOP_USAGE, writeOut } from './top.js';

const USAGE = `Usage: hotcount <command> [options]

Commands:
  top     the most frequent lines or fields of files or standard input, in fixed memory
  proxy   a reverse proxy that limits each client's rate and requests in progress

Run 'hotcount top --help' or 'hotcount proxy --help' for their options.
`;

function version(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8'));
  return pkg.version;
}

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === '--version' || command === '-v') {
    await writeOut([`${version()}\n`]);
    return 0;
  }
  if (command === undefined) {
    // A missing command is a usage error: the usage goes where errors go.
    process.stderr.write(USAGE);
    return 2;
  }
  if (command === '--help' || command === '-h' || command === 'help') {
    await writeOut([USAGE]);
    return 0;
  }
  if (command === 'proxy') {
    const { PROXY_USAGE, parseProxyArgs, runProxy } = await loadProxy();
    const run = parseProxyArgs(rest);
    if (run.help) {
      await writeOut([PROXY_USAGE]);
      return 0;
    }
    await runProxy(run);
    return 0;
  }
  if (command !== 'top') throw new UsageError(`unknown command '${command}'`);
  const options = parseTopArgs(rest);
  if (options.help) {
    await writeOut([TOP_USAGE]);
    return 0;
  }
  await (options.demo ? runDemo(options) : runTop(options));
  return 0;
}

/**
 * The proxy command, loaded when asked for: it forwards with undici, an optional peer
 * dependency, so that `hotcount top` and the library run without it.
 */
async function loadProxy(): Promise<typeof import('./proxy.js')> {
  try {
    return await import('./proxy.js');
  } catch (error) {
    // undici missing, or one the proxy cannot run on: proxy/undici.ts says which, with this code
    // (its UNDICI_UNUSABLE, not imported: that module loads undici).
    if ((error as NodeJS.ErrnoException).code === 'ERR_HOTCOUNT_UNDICI') {
      throw new InputError((error as Error).message);
    }
    throw error;
  }
}

function fail(error: unknown): void {
  if (error instanceof UsageError) {
    const command = process.argv[2] === 'proxy' ? 'proxy' : 'top';
    process.stderr.write(`hotcount: ${error.message}\nTry 'hotcount ${command} --help'.\n`);
    process.exitCode = 2;
  } else if (error instanceof InputError) {
    process.stderr.write(`hotcount: ${error.message}\n`);
    process.exitCode = 1;
  } else {
    // A bug, not a failure of the input: the stack is what a report needs.
    throw error;
  }
}

// A reader that closes the pipe early (`hotcount top | head -3`) is not an error; any other
// write error is (a full disk, `> /dev/full`): one line, exit 1, and nothing more is written.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(0);
  process.stderr.write(`hotcount: cannot write standard output: ${reason(error)}\n`);
  process.exit(1);
});

main(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
}, fail);
