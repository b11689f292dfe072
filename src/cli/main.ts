#!/usr/bin/env node
/** The `hotcount` command. */
import { readFileSync } from 'node:fs';
import { runDemo } from './demo.js';
import { InputError, UsageError } from './errors.js';
import { parseTopArgs, runTop, TOP_USAGE } from './top.js';

const USAGE = `Usage: hotcount <command> [options]

Commands:
  top     the most frequent lines or fields of files or standard input, in fixed memory

Run 'hotcount top --help' for its options.
`;

function version(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8'));
  return pkg.version;
}

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === '--version' || command === '-v') {
    process.stdout.write(`${version()}\n`);
    return 0;
  }
  if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
    process.stdout.write(USAGE);
    return command === undefined ? 2 : 0;
  }
  if (command !== 'top') throw new UsageError(`unknown command '${command}'`);
  const options = parseTopArgs(rest);
  if (options.help) {
    process.stdout.write(TOP_USAGE);
    return 0;
  }
  await (options.demo ? runDemo(options) : runTop(options));
  return 0;
}

// A reader that closes the pipe early (`hotcount top | head -3`) is not an error.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(0);
  throw error;
});

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    if (error instanceof UsageError) {
      process.stderr.write(`hotcount: ${error.message}\nTry 'hotcount top --help'.\n`);
      process.exitCode = 2;
    } else if (error instanceof InputError || error instanceof RangeError) {
      process.stderr.write(`hotcount: ${error.message}\n`);
      process.exitCode = 1;
    } else if ((error as NodeJS.ErrnoException)?.code !== undefined) {
      const e = error as NodeJS.ErrnoException;
      process.stderr.write(`hotcount: cannot read${e.path ? ` '${e.path}'` : ''}: ${e.code}\n`);
      process.exitCode = 1;
    } else {
      throw error;
    }
  },
);
