/**
 * Durations and rates as people write them on a command line or in a config file: `500ms`,
 * `1s`, `1m`, `1h` (an integer and a unit), and a rate `N/DURATION` (`100/1m`, `10/s`: a unit
 * alone means one of it).
 */
import { rangeError, typeError } from '../core.js';

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/**
 * Milliseconds of `text`; TypeError naming `name` unless it is a string, RangeError unless it
 * is `<integer><ms|s|m|h>` from 1 ms to 2^31 ms (about 24 days).
 */
export function parseDuration(name: string, text: unknown): number {
  if (typeof text !== 'string')
    throw typeError(name, 'a duration such as 500ms, 1s, 1m or 1h', text);
  const match = /^(\d{0,9})(ms|s|m|h)$/.exec(text.trim());
  const ms = match === null ? 0 : Number(match[1] === '' ? 1 : match[1]) * UNIT_MS[match[2]];
  if (!(ms >= 1 && ms <= 2 ** 31)) {
    throw rangeError(name, 'a duration such as 500ms, 1s, 1m or 1h (at most 24 days)', text);
  }
  return ms;
}

/**
 * `N/DURATION`: N requests per window of DURATION. TypeError naming `name` unless `text` is a
 * string; RangeError unless N is an integer from 1 to 2^31 - 1 and `parseDuration` reads
 * DURATION.
 */
export function parseRate(
  name: string,
  text: unknown,
): {
  /** N: requests per window. */
  limit: number;
  /** DURATION, in milliseconds. */
  windowMs: number;
} {
  if (typeof text !== 'string') throw typeError(name, 'a rate such as 100/1m', text);
  const match = /^\s*(\d{1,10})\s*\/\s*(\S+)\s*$/.exec(text);
  const limit = match === null ? 0 : Number(match[1]);
  if (match === null || !(limit >= 1 && limit <= 0x7fffffff)) {
    throw rangeError(name, 'a rate N/DURATION with N from 1, such as 100/1m or 10/1s', text);
  }
  return { limit, windowMs: parseDuration(name, match[2]) };
}
