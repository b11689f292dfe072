/**
 * The seam over node-redis (5 and 6): `createClient()` and `createCluster()`. node-redis takes
 * scripts when the client is made, and the user's client is made already, so the scripts go out
 * as raw EVALSHA, and once as EVAL when Redis answers NOSCRIPT (raw-commands.ts); a cluster routes
 * them by their first key's slot. Bulk replies come back as Buffers through the call's type
 * mapping. node-redis writes a tick's commands together itself, so no write groups here.
 */
import type {
  NodeRedisClient,
  NodeRedisCluster,
  RedisArgument,
  RedisScript,
  RedisSeam,
} from './client.js';
import { BYTES } from './client.js';
import { asEval, evalSha, isNoScript, onKey, type RawArgument } from './raw-commands.js';

/** node-redis's type mapping for bulk strings ('$', RESP_TYPES.BLOB_STRING) as Buffers. */
const AS_BYTES = { typeMapping: { 36: Buffer } };

/** Sends one command, routed by `firstKey` on a cluster. */
type Send = (
  firstKey: string,
  args: RawArgument[],
  options: object | undefined,
) => Promise<unknown>;

export class NodeRedisSeam implements RedisSeam {
  private constructor(private readonly send: Send) {}

  static ofClient(client: NodeRedisClient): NodeRedisSeam {
    return new NodeRedisSeam((_firstKey, args, options) => client.sendCommand(args, options));
  }

  static ofCluster(cluster: NodeRedisCluster): NodeRedisSeam {
    return new NodeRedisSeam((firstKey, args, options) =>
      cluster.sendCommand(firstKey, false, args, options),
    );
  }

  async run(
    script: RedisScript,
    keys: readonly string[],
    args: readonly RedisArgument[],
    flags: number,
  ): Promise<unknown> {
    const command = evalSha(script, keys, args);
    const options = (flags & BYTES) !== 0 ? AS_BYTES : undefined;
    try {
      return await this.send(keys[0], command, options);
    } catch (error) {
      if (!isNoScript(error)) throw error;
      return this.send(keys[0], asEval(command, script), options);
    }
  }

  call(
    command: string,
    key: string,
    args: readonly (string | number)[],
    _flags: number,
  ): Promise<unknown> {
    return this.send(key, onKey(command, key, args), undefined);
  }
}
