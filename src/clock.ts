/**
 * The clock option every timed structure takes (`now`): a function returning milliseconds,
 * Date.now unless injected. Tests inject one so that nothing depends on the wall clock's pace.
 */
import { typeError } from './errors.js';

/** Checks the clock option: a function (called on every operation), or undefined. */
export function checkClock(now: unknown): () => number {
  if (now === undefined) return Date.now;
  if (typeof now !== 'function') throw typeError('now', 'a function returning milliseconds', now);
  return now as () => number;
}

/** The clock's time, checked: TypeError naming now() unless a finite number of milliseconds. */
export function readClock(now: () => number): number {
  const time = now();
  if (typeof time !== 'number' || time - time !== 0) {
    throw typeError('now()', 'a finite number of milliseconds', time);
  }
  return time;
}
