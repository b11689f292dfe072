/**
 * How the generic cell rate algorithm (GCRA; ITU-T I.371, the virtual scheduling algorithm;
 * redis-cell's CL.THROTTLE) keeps time in 32-bit sketch cells.
 *
 * GCRA keeps, per key, a theoretical arrival time (TAT). With emission interval
 * T = windowMs / limit and a request of cost c at time t: tat = max(TAT, t); the request passes
 * when tat + c * T - t <= burst * T, and then TAT becomes tat + c * T. So `burst` requests may
 * pass at one instant, then one every T; over any interval of length L a key passes at most
 * burst + L / T requests, and a key paced at exactly T always passes.
 *
 * The cells. A key's TAT lives in the cells of a conservative sketch, raise-only (a cell becomes
 * max(cell, new TAT)); the key's TAT is the least of its cells, so a collision can only make a
 * key's TAT later (the key waits), never earlier (it never passes early). The test-and-raise is
 * SketchKernel.raiseWithin, atomic across threads.
 *
 * Time in the cells. Cells are 32-bit, and clocks count milliseconds since 1970 (2^40 and more).
 * So time is counted in ticks of 1 / ticksPerMs of a millisecond from an epoch that moves: the
 * start of the current era, eras being windows of `eraMs` aligned to the clock, kept in the
 * three sketches of windows.ts. A cell written in an era holds TAT - (start of that era). A TAT
 * is never more than burst * T ahead of the time it was written, and an era is at least that
 * long; so a TAT written two eras ago has passed, and a passed TAT means the same as none (tat =
 * max(TAT, t)). The key's TAT is therefore the later of what the current and the previous era
 * hold, and an era's sketch can be cleared once the clock is two eras on, as windows.ts does.
 * Cells hold at most eraMs * ticksPerMs + burst * T ticks, below 2^31 by construction.
 *
 * The grid. Ticks are chosen so that T is a whole number of them and a whole millisecond too:
 * with g = gcd(windowMs, limit), a tick is g / limit ms and T is windowMs / g ticks, exactly, so
 * with a clock in whole milliseconds (Date.now) GCRA runs with no rounding at all, and its
 * guarantees hold as stated. That needs burst * windowMs / g <= 2^29 ticks. When it does not
 * (say 7777 requests a day: g = 1), the grid falls back to the finest whole number of ticks per
 * millisecond that fits, and T is rounded to the nearest tick (within a tick, and a tick is
 * then at most 1/2000 of T): the guarantees hold for that T. When even a tick of 1 ms cannot
 * hold burst * T (burst * T over 2^29 ms, about 6.2 days), the options are refused. A clock
 * with fractions of a millisecond is read to the tick below.
 */

/** The most ticks a key's TAT may run ahead of the clock: burst * T. */
const MAX_HORIZON_TICKS = 2 ** 29;
/** In the fallback grid, T spans at least this many ticks (rounding T by at most 1/2000). */
const MIN_INTERVAL_TICKS = 2000;

export interface GcraGrid {
  /** Ticks per millisecond (an integer). */
  ticksPerMs: number;
  /** T, in ticks. */
  intervalTicks: number;
  /** burst * T, in ticks: how far a TAT may run ahead of the clock. */
  horizonTicks: number;
  /** The length of an era (the epoch's step), in ms: at least burst * T. */
  eraMs: number;
  /** Whether T is exactly windowMs / limit (else rounded to the nearest tick). */
  exact: boolean;
}

function gcd(a: number, b: number): number {
  while (b !== 0) [a, b] = [b, a % b];
  return a;
}

function grid(ticksPerMs: number, intervalTicks: number, burst: number, exact: boolean) {
  const horizonTicks = burst * intervalTicks;
  return {
    ticksPerMs,
    intervalTicks,
    horizonTicks,
    eraMs: Math.max(1, Math.ceil(horizonTicks / ticksPerMs)),
    exact,
  };
}

/** The grid for `limit` per `windowMs` with `burst`; RangeError when no grid fits 32 bits. */
export function gcraGrid(limit: number, windowMs: number, burst: number): GcraGrid {
  const g = gcd(windowMs, limit);
  const exactTicks = windowMs / g;
  const exactRate = limit / g;
  if (burst * exactTicks <= MAX_HORIZON_TICKS && exactRate <= MAX_HORIZON_TICKS) {
    return grid(exactRate, exactTicks, burst, true);
  }
  const intervalMs = windowMs / limit;
  // The finest grid that fits: ticksPerMs * intervalMs * burst <= 2^29, and ticksPerMs <= 2^29
  // (an era of eraMs then spans below 2^30 ticks, so cells stay below 2^31).
  const ticksPerMs = Math.min(
    exactRate,
    MAX_HORIZON_TICKS,
    Math.floor(MAX_HORIZON_TICKS / (burst * intervalMs)),
  );
  // To the nearest tick, unless that carries burst * T past 2^29 (then one tick less: still
  // within a tick of the exact T).
  const intervalTicks = Math.min(
    Math.round(intervalMs * ticksPerMs),
    Math.floor(MAX_HORIZON_TICKS / burst),
  );
  if (ticksPerMs < 1 || intervalTicks < MIN_INTERVAL_TICKS) {
    throw new RangeError(
      `gcra cannot keep the times of limit ${limit}, windowMs ${windowMs} and burst ${burst} ` +
        `in 32-bit cells: burst * windowMs / limit (${burst * intervalMs} ms) must span at ` +
        `most 2^29 ticks, with ticks of at most 1/${MIN_INTERVAL_TICKS} of windowMs / limit ` +
        `and no longer than 1 ms; lower burst or windowMs, or raise limit`,
    );
  }
  return grid(ticksPerMs, intervalTicks, burst, false);
}
