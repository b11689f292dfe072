/**
 * `hotcount top`: the top k lines (or fields) of files or standard input, in fixed memory.
 *
 * The honest replacement for `sort | uniq -c | sort -rn | head` on logs too big for it: lines are
 * never decoded or copied; each is hashed from the bytes of the chunk it was read into, and only
 * the keys that enter the heavy-hitters table are copied (and decoded, for display).
 */
import { availableParallelism } from 'node:os';
import { parseArgs } from 'node:util';
import { resolveDimensions } from '../core.js';
import { UsageError } from './failures.js';
import { type Input, openInputs } from './inputs.js';
import { MAX_LINE_BYTES } from './line-splitter.js';
import { Progress } from './progress.js';
import { renderJson, renderTable } from './render.js';
import { TopCounter } from './top-counter.js';
import { countInThreads } from './top-threads.js';

const DEFAULT_KEY_WIDTH = 60;

export const TOP_USAGE = `Usage: hotcount top [FILE...] [options]

Counts the lines (or one field of each line) of FILEs, or of standard input when no FILE is
given or FILE is -, in fixed memory, and prints the k most frequent with their count, the range
the true count lies in, and their share of the lines counted.

Options:
  -k N                 how many keys to print (default 20, at most 1000000; memory grows
                       with k, see docs/heavy-hitters.md)
  -f, --field N        count field N (from 1) of each line instead of the whole line
  -d, --delimiter D    fields are separated by D (default: runs of blanks, as awk). D may
                       hold escapes for bytes: \\t (tab), \\\\ (backslash), \\xHH (any byte,
                       e.g. -d '\\xa7' for a delimiter that is not UTF-8)
  -s, --only-delimited with -d: skip lines without D (as cut -s; by default such a line is
                       its own field, as cut prints it)
      --epsilon E      sketch error as a fraction of the lines counted (default: width 16384)
      --threads N      count the FILEs in N threads, in 16 pieces with a sketch each, merged
                       (default 1; at most the number of cores, ${availableParallelism()} here: more
                       is cut to that). Pipes, devices and standard input are read whole by one
                       reader. The same output every run; lower bounds may be looser than
                       one thread's (see the guide).
      --key-width N    cut keys to N characters in the table, marked with … (default
                       ${DEFAULT_KEY_WIDTH}; 0: never cut)
      --json           print JSON instead of a table (keys exact, hex when not UTF-8)
      --demo           count an embedded, generated demo stream and compare with a Map
  -h, --help           show this help

Lines end at \\n; a trailing \\r is stripped; empty lines are skipped, and so are lines whose
field N is empty or missing (the empty key is never counted; cut would print an empty line).
A line may be up to ${MAX_LINE_BYTES / 1024 / 1024} MiB long; a longer one is an error.

In the table, characters that are invisible or act on the terminal are escaped: \\\\ is a
backslash, \\t a tab, \\xHH a control character (below 80) or a byte that is not UTF-8 (from
80), \\u{H} a code point; … marks a cut.

Exit status: 0 on success (also when a reader such as head closes the output early), 1 when an
input cannot be read or the output cannot be written, 2 for a bad flag or argument.
`;

export interface TopOptions {
  files: string[];
  k: number;
  field: number | undefined;
  delimiter: Uint8Array;
  onlyDelimited: boolean;
  epsilon: number | undefined;
  threads: number;
  keyWidth: number;
  json: boolean;
  demo: boolean;
  help: boolean;
}

function integerFlag(
  name: string,
  text: string | undefined,
  fallback: number,
  min: number,
  max: number,
): number {
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!/^\d+$/.test(text) || value < min || value > max) {
    throw new UsageError(`${name} must be an integer from ${min} to ${max}; received '${text}'`);
  }
  return value;
}

/**
 * The bytes of a delimiter as given on the command line, with its escapes (\t, \\, \xHH).
 * Node decodes arguments as UTF-8 and turns bytes that are not into U+FFFD, so a raw byte such
 * as $'\xa7' arrives as U+FFFD: refused, with the escape to use instead.
 */
export function delimiterBytes(text: string): Uint8Array {
  if (text === '') throw new UsageError('--delimiter must not be empty');
  if (text.includes('\uFFFD')) {
    throw new UsageError(
      '--delimiter is not valid UTF-8 (or holds U+FFFD); give such a byte as an escape, ' +
        "for example -d '\\xa7'",
    );
  }
  const bytes: number[] = [];
  for (let i = 0; i < text.length; i++) {
    if (text[i] !== '\\') {
      const code = text.codePointAt(i) as number;
      if (code > 0xffff) i++;
      bytes.push(...Buffer.from(String.fromCodePoint(code)));
      continue;
    }
    const next = text[i + 1];
    if (next === 't') {
      bytes.push(9);
      i++;
    } else if (next === '\\') {
      bytes.push(0x5c);
      i++;
    } else if (next === 'x' && /^[0-9a-fA-F]{2}$/.test(text.slice(i + 2, i + 4))) {
      bytes.push(Number.parseInt(text.slice(i + 2, i + 4), 16));
      i += 3;
    } else {
      throw new UsageError(
        `--delimiter has an unknown escape '${text.slice(i, i + 4)}'; the escapes are \\t, ` +
          '\\\\ and \\xHH (two hex digits)',
      );
    }
  }
  if (bytes.includes(10))
    throw new UsageError('--delimiter cannot hold a newline: lines end there');
  return new Uint8Array(bytes);
}

export function parseTopArgs(args: string[]): TopOptions {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(args);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const { values, positionals } = parsed;
  const k = integerFlag('-k', values.k, 20, 1, 1_000_000);
  const field =
    values.field === undefined ? undefined : integerFlag('--field', values.field, 1, 1, 1_000_000);
  const delimiter =
    values.delimiter === undefined ? new Uint8Array(0) : delimiterBytes(values.delimiter);
  const onlyDelimited = values['only-delimited'] ?? false;
  if (onlyDelimited && delimiter.length === 0) {
    throw new UsageError('--only-delimited needs --delimiter');
  }
  if (delimiter.length > 0 && field === undefined) {
    throw new UsageError('--delimiter splits fields: give --field too');
  }
  let epsilon: number | undefined;
  if (values.epsilon !== undefined) {
    epsilon = Number(values.epsilon);
    if (!(epsilon > 0 && epsilon < 1)) {
      throw new UsageError(`--epsilon must be a number in (0, 1); received '${values.epsilon}'`);
    }
    try {
      resolveDimensions({ epsilon });
    } catch (error) {
      throw new UsageError(`--${(error as Error).message}`);
    }
  }
  if (values.demo && positionals.length > 0) throw new UsageError('--demo takes no FILE');
  const threads = integerFlag('--threads', values.threads, 1, 1, 1_000_000);
  if (values.demo && threads > 1) throw new UsageError('--threads splits FILEs; --demo has none');
  const keyWidth = integerFlag('--key-width', values['key-width'], DEFAULT_KEY_WIDTH, 0, 1_000_000);
  if (keyWidth === 1) throw new UsageError('--key-width must be 0 (never cut) or at least 2');
  return {
    files: positionals,
    k,
    field,
    delimiter,
    onlyDelimited,
    epsilon,
    threads,
    keyWidth,
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
      'only-delimited': { type: 'boolean', short: 's' },
      epsilon: { type: 'string' },
      threads: { type: 'string' },
      'key-width': { type: 'string' },
      json: { type: 'boolean' },
      demo: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
}

/** Threads to run: `requested`, at most one per core (more only share the cores), said on stderr. */
function threadsToRun(requested: number): number {
  const cores = availableParallelism();
  if (requested <= cores) return requested;
  process.stderr.write(
    `hotcount: --threads ${requested} is more than the ${cores} cores here; using ${cores}\n`,
  );
  return cores;
}

/**
 * Writes `chunks` to standard output, waiting whenever it asks to. A write error ends the
 * process from main.ts's 'error' listener, so a wait for 'drain' never outlives one.
 */
export async function writeOut(chunks: Iterable<string>): Promise<void> {
  const out = process.stdout;
  for (const chunk of chunks) {
    if (!out.write(chunk)) await new Promise((resolve) => out.once('drain', resolve));
  }
}

async function countOneThread(options: TopOptions, inputs: Input[], progress?: Progress) {
  const counter = new TopCounter(options);
  await counter.countInputs(inputs, progress);
  return counter;
}

export async function runTop(options: TopOptions): Promise<void> {
  const inputs = openInputs(options.files);
  const threads = options.threads > 1 ? threadsToRun(options.threads) : 1;
  const started = performance.now();
  // A bar only when every input has a size to measure progress against.
  const progress = inputs.every((input) => input.splittableBytes > 0)
    ? Progress.forFiles(
        process.stderr,
        inputs.reduce((sum, input) => sum + input.splittableBytes, 0),
      )
    : undefined;
  let counter: TopCounter;
  try {
    counter =
      threads > 1 && inputs.some((input) => input.splittableBytes > 0)
        ? await countInThreads(options, inputs, threads, progress)
        : await countOneThread(options, inputs, progress);
  } finally {
    progress?.finish();
  }
  const summary = counter.summary((performance.now() - started) / 1000);
  // The time is the one thing that changes from run to run: off the table, so that the same
  // input prints the same bytes, and said where the progress bar was.
  if (process.stderr.isTTY) {
    process.stderr.write(`hotcount: counted in ${summary.seconds.toFixed(2)} s\n`);
  }
  await writeOut(options.json ? renderJson(summary) : renderTable(summary, options.keyWidth));
}
