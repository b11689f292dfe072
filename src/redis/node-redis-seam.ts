/**
 * The seam over node-redis (5 and 6): `createClient()` and `createCluster()`, through raw
 * commands (raw-seam.ts), since node-redis takes scripts only when the client is made and the
 * user's client is made already; a cluster routes each by its first key's slot. Bulk replies
 * come back as Buffers through the call's type mapping. node-redis writes a tick's commands
 * together itself, so no write groups here.
 */
import type { NodeRedisClient, NodeRedisCluster, RedisSeam } from './client.js';
import { RawSeam } from './raw-seam.js';

/** node-redis's type mapping for bulk strings ('$', RESP_TYPES.BLOB_STRING) as Buffers. */
const AS_BYTES = { typeMapping: { 36: Buffer } };

export function nodeRedisClientSeam(client: NodeRedisClient): RedisSeam {
  return new RawSeam((_firstKey, command, bytes) =>
    client.sendCommand(command, bytes ? AS_BYTES : undefined),
  );
}

export function nodeRedisClusterSeam(cluster: NodeRedisCluster): RedisSeam {
  return new RawSeam((firstKey, command, bytes) =>
    cluster.sendCommand(firstKey, false, command, bytes ? AS_BYTES : undefined),
  );
}
