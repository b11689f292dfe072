/**
 * `hotcount top`: the top k lines (or fields) of files or standard input, in fixed memory.
 *
 * The honest replacement for `sort | uniq -c | sort -rn | head` on logs too big for it: lines are
 * never decoded or copied; each is hashed from the bytes of the chunk it was read into, and only
 * the keys that enter the heavy-hitters table are copied (and decoded, for display).
 */
import { createReadStream, statSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { InputError, UsageError } from './errors.js';
import { Progress } from './progress.js';
import { renderJson, renderTable } from './render.js';
import { TopCounter } from './top-counter.js';
import { countInThreads } from './top-threads.js';

export const TOP_USAGE = `Usage: hotcount top [FILE...] [options]

Counts the lines (or one field of each line) of FILEs, or of standard input when no FILE is
given, in fixed memory, and prints the k most frequent with their count, error bound and share.

Options:
  -k N               how many keys to print (default 20)
  -f, --field N      count field N (from 1) of each line instead of the whole line
  -d, --delimiter D  fields are separated by D (default: runs of blanks, as awk)
      --epsilon E    sketch error as a fraction of the lines counted (default: width 16384)
      --threads N    count the FILEs in N worker threads, one shared sketch (default 1;
                     standard input is always read by one)
      --json         print JSON instead of a table
      --demo         count an embedded, generated demo stream and compare with a Map
  -h, --help         show this help
`;

/** More threads than this is a typo: each is a V8 isolate of its own. */
const MAX_THREADS = 256;

export interface TopOptions {
  files: string[];
  k: number;
  field: number | undefined;
  delimiter: Uint8Array;
  epsilon: number | undefined;
  threads: number;
  json: boolean;
  demo: boolean;
  help: boolean;
}

function integerFlag(
  name: string,
  text: string | undefined,
  fallback: number,
  max: number,
): number {
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!/^\d+$/.test(text) || value < 1 || value > max) {
    throw new UsageError(`${name} must be an integer from 1 to ${max}; received '${text}'`);
  }
  return value;
}

export function parseTopArgs(args: string[]): TopOptions {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(args);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const { values, positionals } = parsed;
  const k = integerFlag('-k', values.k, 20, 1_000_000);
  const field =
    values.field === undefined ? undefined : integerFlag('--field', values.field, 1, 1_000_000);
  let delimiter = new Uint8Array(0);
  if (values.delimiter !== undefined) {
    if (values.delimiter === '') throw new UsageError('--delimiter must not be empty');
    delimiter = new Uint8Array(Buffer.from(values.delimiter === '\\t' ? '\t' : values.delimiter));
  }
  let epsilon: number | undefined;
  if (values.epsilon !== undefined) {
    epsilon = Number(values.epsilon);
    if (!(epsilon > 0 && epsilon < 1)) {
      throw new UsageError(`--epsilon must be a number in (0, 1); received '${values.epsilon}'`);
    }
  }
  if (values.demo && positionals.length > 0) throw new UsageError('--demo takes no FILE');
  const threads = integerFlag('--threads', values.threads, 1, MAX_THREADS);
  if (values.demo && threads > 1) throw new UsageError('--threads splits FILEs; --demo has none');
  return {
    files: positionals,
    k,
    field,
    delimiter,
    epsilon,
    threads,
    json: values.json ?? false,
    demo: values.demo ?? false,
    help: values.help ?? false,
  };
}

function parse(args: string[]) {
  return parseArgs({
    args,
    allowPositionals: true,
    strict: true,
    options: {
      k: { type: 'string', short: 'k' },
      field: { type: 'string', short: 'f' },
      delimiter: { type: 'string', short: 'd' },
      epsilon: { type: 'string' },
      threads: { type: 'string' },
      json: { type: 'boolean' },
      demo: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
}

/** Checks every file before reading any, so a typo in the last name fails at once. */
export function fileSizes(files: string[]): number[] {
  return files.map((file) => {
    let stats: ReturnType<typeof statSync>;
    try {
      stats = statSync(file);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      const reason =
        code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : String(code);
      throw new InputError(`cannot read '${file}': ${reason}`);
    }
    if (stats.isDirectory()) throw new InputError(`cannot read '${file}': it is a directory`);
    return stats.size;
  });
}

export async function runTop(options: TopOptions): Promise<void> {
  const sizes = fileSizes(options.files);
  const started = performance.now();
  let counter: TopCounter;
  if (options.files.length === 0) {
    counter = new TopCounter(options);
    await counter.count(process.stdin);
  } else {
    const progress = Progress.forFiles(
      process.stderr,
      sizes.reduce((a, b) => a + b, 0),
    );
    try {
      if (options.threads > 1) {
        counter = await countInThreads(options, options.files, sizes, options.threads, progress);
      } else {
        counter = new TopCounter(options);
        for (const file of options.files) {
          await counter.count(createReadStream(file, { highWaterMark: 1 << 20 }), progress);
        }
      }
    } finally {
      progress?.finish();
    }
  }
  const summary = counter.summary((performance.now() - started) / 1000);
  process.stdout.write(options.json ? renderJson(summary) : renderTable(summary));
}
