/**
 * The seam over ioredis (5 and 6, `Redis` and `Cluster`): the scripts become commands
 * (defineCommand, once per client), which ioredis sends as EVALSHA and retries as EVAL when
 * Redis answers NOSCRIPT; a Cluster routes them by their first key's slot. Calls on a call's path
 * go out in write groups (write-groups.ts).
 */
import type { IoredisClient, RedisArgument, RedisScript, RedisSeam } from './client.js';
import { BYTES, GROUPED } from './client.js';
import { SCRIPTS } from './scripts.js';
import { type IoredisConnection, WriteGroups } from './write-groups.js';

type Command = (...args: unknown[]) => Promise<unknown>;

export class IoredisSeam implements RedisSeam {
  private readonly groups: WriteGroups;

  constructor(private readonly redis: IoredisClient) {
    for (const script of SCRIPTS) {
      redis.defineCommand(script.name, { numberOfKeys: script.keys, lua: script.lua });
    }
    this.groups = new WriteGroups(redis as IoredisConnection);
  }

  run(
    script: RedisScript,
    keys: readonly string[],
    args: readonly RedisArgument[],
    flags: number,
  ): Promise<unknown> {
    if ((flags & GROUPED) !== 0) this.groups.next();
    // ioredis defines `name` and `nameBuffer` (bulk replies as Buffers) for each command.
    const name = (flags & BYTES) !== 0 ? `${script.name}Buffer` : script.name;
    const command = (this.redis as unknown as Record<string, Command>)[name];
    return command.call(this.redis, ...keys, ...args);
  }

  call(
    command: string,
    key: string,
    args: readonly (string | number)[],
    flags: number,
  ): Promise<unknown> {
    if ((flags & GROUPED) !== 0) this.groups.next();
    return this.redis.call(command, key, ...args);
  }
}
