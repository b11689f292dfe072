/**
 * The seam for the client a user passes, told by its shape (its methods), never by `instanceof`:
 * the user's copy of a client library is not hotcount's. One seam per client, shared by every
 * structure that uses it (the scripts are defined once, the writes grouped across structures).
 */
import { typeError } from '../core.js';
import type { RedisClient, RedisSeam } from './client.js';
import { IoredisSeam } from './ioredis-seam.js';

const seams = new WeakMap<object, RedisSeam>();

/** The clients the layer takes, for error messages. */
const ACCEPTED = 'an ioredis Redis or Cluster';

/** The seam of `client`, or a TypeError naming `name` and what it accepts. */
export function seamOf(name: string, client: unknown): RedisSeam {
  if (client === null || typeof client !== 'object') throw typeError(name, ACCEPTED, client);
  let seam = seams.get(client);
  if (seam !== undefined) return seam;
  if (typeof (client as { defineCommand?: unknown }).defineCommand === 'function') {
    seam = new IoredisSeam(client as RedisClient);
  } else {
    throw typeError(name, ACCEPTED, client);
  }
  seams.set(client, seam);
  return seam;
}
