/**
 * The seam for the clients whose scripts hotcount cannot define up front: node-redis takes
 * scripts only when a client is made, and valkey-glide's are glide's own objects. Scripts go as
 * raw EVALSHA with the keys and the arguments flattened, and once as EVAL when Redis does not
 * have the script (NOSCRIPT, as after a restart or SCRIPT FLUSH). Each client's adapter
 * (node-redis-seam.ts, glide-seam.ts) only says how it sends one command.
 */
import type { RedisArgument, RedisScript, RedisSeam } from './client.js';
import { BYTES } from './client.js';

/** An argument as a client sends it: numbers as their decimal text. */
export type RawArgument = string | Buffer;

/**
 * Sends one command as its arguments, routed by `firstKey` on a cluster; bulk replies come back
 * as Buffers when `bytes`, else as strings.
 */
export type Send = (firstKey: string, command: RawArgument[], bytes: boolean) => Promise<unknown>;

export class RawSeam implements RedisSeam {
  constructor(private readonly send: Send) {}

  async run(
    script: RedisScript,
    keys: readonly string[],
    args: readonly RedisArgument[],
    flags: number,
  ): Promise<unknown> {
    const command = evalSha(script, keys, args);
    const bytes = (flags & BYTES) !== 0;
    try {
      return await this.send(keys[0], command, bytes);
    } catch (error) {
      if (!isNoScript(error)) throw error;
      command[0] = 'EVAL';
      command[1] = script.lua;
      return this.send(keys[0], command, bytes);
    }
  }

  call(
    command: string,
    key: string,
    args: readonly (string | number)[],
    _flags: number,
  ): Promise<unknown> {
    const sent: RawArgument[] = [command, key];
    for (const arg of args) sent.push(String(arg));
    return this.send(key, sent, false);
  }
}

/** EVALSHA `script` with `keys` and `args` (arrays flattened), as one command's arguments. */
function evalSha(
  script: RedisScript,
  keys: readonly string[],
  args: readonly RedisArgument[],
): RawArgument[] {
  const command: RawArgument[] = ['EVALSHA', script.sha, String(keys.length)];
  for (const key of keys) command.push(key);
  for (const arg of args) {
    if (typeof arg === 'object' && !Buffer.isBuffer(arg)) {
      for (const item of arg) command.push(String(item));
    } else {
      command.push(typeof arg === 'number' ? String(arg) : arg);
    }
  }
  return command;
}

/** Whether `error` is Redis's NOSCRIPT, as each client words it. */
function isNoScript(error: unknown): boolean {
  return /^NOSCRIPT|NoScriptError/.test((error as Error)?.message ?? '');
}
