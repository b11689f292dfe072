/** Seeded update streams that a worker and the main thread can both replay. */
import { xorshift32 } from '../../src/cli/zipf.js';

export interface SeededUpdates {
  /** The next key, an integer in [0, keySpace); sets `by` to its amount, 1 to 4. */
  (): number;
  by: number;
}

export function seededUpdates(seed: number, keySpace: number): SeededUpdates {
  const random = xorshift32(seed);
  const next = (() => {
    const u = random();
    next.by = 1 + ((u * 4294967296) & 3);
    return Math.floor(random() * keySpace);
  }) as SeededUpdates;
  next.by = 1;
  return next;
}
