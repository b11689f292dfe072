/** The two ways `hotcount` fails on purpose; main.ts maps them to exit codes. */

/** A bad flag or argument: exit code 2, with the usage hint. */
export class UsageError extends Error {}
/** An input that cannot be read: exit code 1. */
export class InputError extends Error {}
