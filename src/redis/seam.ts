/**
 * The seam for the client a user passes, told by its shape (its methods), never by `instanceof`:
 * the user's copy of a client library is not hotcount's. One seam per client, shared by every
 * structure that uses it (the scripts are defined once, the writes grouped across structures).
 */
import { typeError } from '../core.js';
import type {
  GlideClient,
  IoredisClient,
  NodeRedisClient,
  NodeRedisCluster,
  RedisSeam,
} from './client.js';
import { glideSeam } from './glide-seam.js';
import { IoredisSeam } from './ioredis-seam.js';
import { nodeRedisClientSeam, nodeRedisClusterSeam } from './node-redis-seam.js';

const seams = new WeakMap<object, RedisSeam>();

/** The clients the layer takes, for error messages. */
const ACCEPTED =
  'an ioredis or iovalkey Redis or Cluster, a node-redis client (createClient) or cluster (createCluster), or a valkey-glide GlideClient or GlideClusterClient';

function has(client: object, method: string): boolean {
  return typeof (client as Record<string, unknown>)[method] === 'function';
}

/** The seam of `client`, or a TypeError naming `name` and what it accepts. */
export function seamOf(name: string, client: unknown): RedisSeam {
  if (client === null || typeof client !== 'object') throw typeError(name, ACCEPTED, client);
  let seam = seams.get(client);
  if (seam !== undefined) return seam;
  if (has(client, 'defineCommand') && has(client, 'call')) {
    seam = new IoredisSeam(client as IoredisClient);
  } else if (has(client, 'sendCommand') && has(client, 'getSlotMaster')) {
    seam = nodeRedisClusterSeam(client as NodeRedisCluster);
  } else if (has(client, 'sendCommand') && has(client, 'withTypeMapping')) {
    seam = nodeRedisClientSeam(client as NodeRedisClient);
  } else if (has(client, 'customCommand') && has(client, 'invokeScript')) {
    seam = glideSeam(client as GlideClient);
  } else {
    throw typeError(name, ACCEPTED, client);
  }
  seams.set(client, seam);
  return seam;
}
