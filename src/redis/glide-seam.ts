/**
 * The seam over valkey-glide 2 (`GlideClient`, `GlideClusterClient`): scripts go as raw EVALSHA
 * through `customCommand` (raw-commands.ts), which a cluster client routes by the command's first
 * key, and once as EVAL on NOSCRIPT; glide's own `Script` objects would do as much, but they are
 * the user's copy of glide's classes, not hotcount's. Each call names its decoder: Buffers for
 * cells, strings for the rest, whatever the client's default decoder.
 */
import type { GlideClient, RedisArgument, RedisScript, RedisSeam } from './client.js';
import { BYTES } from './client.js';
import { asEval, evalSha, isNoScript, onKey } from './raw-commands.js';

/** glide's `Decoder`: Bytes is 0, String 1. */
const AS_BYTES = { decoder: 0 };
const AS_STRINGS = { decoder: 1 };

export class GlideSeam implements RedisSeam {
  constructor(private readonly client: GlideClient) {}

  async run(
    script: RedisScript,
    keys: readonly string[],
    args: readonly RedisArgument[],
    flags: number,
  ): Promise<unknown> {
    const command = evalSha(script, keys, args);
    const options = (flags & BYTES) !== 0 ? AS_BYTES : AS_STRINGS;
    try {
      return await this.client.customCommand(command, options);
    } catch (error) {
      if (!isNoScript(error)) throw error;
      return this.client.customCommand(asEval(command, script), options);
    }
  }

  call(
    command: string,
    key: string,
    args: readonly (string | number)[],
    _flags: number,
  ): Promise<unknown> {
    return this.client.customCommand(onKey(command, key, args), AS_STRINGS);
  }
}
