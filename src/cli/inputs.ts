/**
 * The inputs of `hotcount top`: FILE arguments, `-` for standard input, or standard input alone
 * when there is none. Every input is checked before any is read, so that a typo in the last name
 * fails at once.
 *
 * A regular file with a size can be split into byte ranges for `--threads` (split.ts). Anything
 * else is a stream that one reader takes whole: a pipe (`/dev/stdin`, `<(cmd)`), a FIFO, a
 * device (`/dev/zero`), and files of /proc and /sys, which are regular but report size 0 while
 * they hold text. Splitting by `stat` size would count nothing of them.
 */
import {
  accessSync,
  constants,
  createReadStream,
  fstatSync,
  readFileSync,
  type Stats,
  statSync,
} from 'node:fs';
import { InputError, inputName, readError } from './failures.js';

export interface Input {
  /** As given: a path, or `-` for standard input. */
  name: string;
  /** Bytes a reader can split by offset; 0 for a stream, read whole. */
  splittableBytes: number;
}

/** Read a megabyte at a time: fewer, larger chunks for the line splitter. */
export const CHUNK_BYTES = 1 << 20;

/** The inputs named by `names` (standard input when empty), checked; InputError otherwise. */
export function openInputs(names: string[]): Input[] {
  if (names.length === 0) names = ['-'];
  return names.map((name) => {
    const stats = name === '-' ? standardInputStats() : fileStats(name);
    if (stats.isDirectory()) throw new InputError(`cannot read ${inputName(name)}: is a directory`);
    // Standard input is read where it is, whatever it is: even a regular file behind `<` has
    // no name a worker could open.
    return { name, splittableBytes: name !== '-' && stats.isFile() ? stats.size : 0 };
  });
}

/** The file's stats, once it is known to be there and readable (access: opening a FIFO waits). */
function fileStats(name: string): Stats {
  try {
    const stats = statSync(name);
    if (!stats.isDirectory()) accessSync(name, constants.R_OK);
    return stats;
  } catch (error) {
    throw readError(name, error);
  }
}

/**
 * Standard input's stats; InputError when it was closed (`<&-`). Node replaces a closed
 * descriptor 0 with /dev/null opened read-write before any script runs, so that reads would
 * find an empty input; a shell's `< /dev/null` and a parent's 'ignore' open it read-only. So
 * /dev/null read-write on 0 means it was closed (on Linux, where /proc tells the mode; a
 * deliberate `<> /dev/null` is taken for a closed input too).
 */
function standardInputStats(): Stats {
  const stats = fstatSync(0);
  if (stats.isCharacterDevice() && stats.rdev === statSync('/dev/null').rdev) {
    let flags = '';
    try {
      flags = /flags:\s*([0-7]+)/.exec(readFileSync('/proc/self/fdinfo/0', 'utf8'))?.[1] ?? '';
    } catch {
      // No /proc here: take the input as given.
    }
    const O_ACCMODE = 3;
    const O_RDWR = 2;
    if (flags !== '' && (Number.parseInt(flags, 8) & O_ACCMODE) === O_RDWR) {
      throw new InputError('cannot read standard input: bad file descriptor (it is closed)');
    }
  }
  return stats;
}

let standardInputTaken = false;

/**
 * The bytes of an input, a chunk at a time. Standard input is read once: a second `-` reads
 * nothing, as with cat.
 */
export function readInput(input: Input): AsyncIterable<Uint8Array> {
  if (input.name !== '-') return createReadStream(input.name, { highWaterMark: CHUNK_BYTES });
  if (standardInputTaken) return (async function* () {})();
  standardInputTaken = true;
  return process.stdin;
}
