/**
 * The seam over node-redis (5 and 6): `createClient()` and `createCluster()`. node-redis takes
 * scripts when the client is made, and the user's client is made already, so the scripts go out
 * as raw EVALSHA, and once as EVAL when Redis answers NOSCRIPT (a restart emptied its script
 * cache); a cluster routes them by their first key's slot. Bulk replies come back as Buffers
 * through the call's type mapping. node-redis writes a tick's commands together itself, so no
 * write groups here.
 */
import type {
  NodeRedisClient,
  NodeRedisCluster,
  RedisArgument,
  RedisScript,
  RedisSeam,
} from './client.js';
import { BYTES } from './client.js';

/** node-redis's type mapping for bulk strings ('$', RESP_TYPES.BLOB_STRING) as Buffers. */
const AS_BYTES = { typeMapping: { 36: Buffer } };

type Argument = string | Buffer;

/** Sends one command, routed by `firstKey` on a cluster. */
type Send = (firstKey: string, args: Argument[], options: object | undefined) => Promise<unknown>;

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
    const command: Argument[] = ['EVALSHA', script.sha, String(keys.length)];
    for (const key of keys) command.push(key);
    for (const arg of args) {
      if (typeof arg === 'object' && !Buffer.isBuffer(arg)) {
        for (const item of arg) command.push(String(item));
      } else {
        command.push(typeof arg === 'number' ? String(arg) : arg);
      }
    }
    const options = (flags & BYTES) !== 0 ? AS_BYTES : undefined;
    try {
      return await this.send(keys[0], command, options);
    } catch (error) {
      if (!(error as Error)?.message?.startsWith('NOSCRIPT')) throw error;
      command[0] = 'EVAL';
      command[1] = script.lua;
      return this.send(keys[0], command, options);
    }
  }

  call(
    command: string,
    key: string,
    args: readonly (string | number)[],
    _flags: number,
  ): Promise<unknown> {
    const sent: Argument[] = [command, key];
    for (const arg of args) sent.push(String(arg));
    return this.send(key, sent, undefined);
  }
}
