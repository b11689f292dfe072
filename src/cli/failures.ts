/**
 * How `hotcount` fails on purpose, one style for every failure: one line on stderr,
 * `hotcount: <what>: <why>`, and an exit code by kind (main.ts):
 * - 2: a bad flag or argument (UsageError), followed by the usage hint;
 * - 1: an input that cannot be read (InputError) or standard output that cannot be written
 *   (main.ts), with the reason the system gave.
 */

import { displayKey } from './escape.js';

/** A bad flag or argument: exit code 2, with the usage hint. */
export class UsageError extends Error {}
/** An input that cannot be read: exit code 1. */
export class InputError extends Error {}

/**
 * The reason of a system error in words ("permission denied"), from Node's message
 * ("EACCES: permission denied, open 'f'"), the same whichever call failed; anything else as
 * its message.
 */
export function reason(error: unknown): string {
  const e = error as NodeJS.ErrnoException;
  if (typeof e?.code === 'string' && typeof e.message === 'string') {
    const words = /^[A-Z0-9_]+: ([^,]+)/.exec(e.message);
    if (words !== null) return words[1];
  }
  return error instanceof Error ? error.message : String(error);
}

/**
 * `name` as the messages show it: "standard input", or quoted and escaped as keys are in the
 * table, so that a name cannot break the one line or act on the terminal.
 */
export function inputName(name: string): string {
  return name === '-' ? 'standard input' : `'${displayKey(Buffer.from(name), 0).text}'`;
}

/** An InputError for `name`, with the reason of `error` (kept as its cause). */
export function readError(name: string, error: unknown): InputError {
  if (error instanceof InputError) return error;
  return new InputError(`cannot read ${inputName(name)}: ${reason(error)}`, { cause: error });
}
