/**
 * The seam between the Redis layer and a client library: what every structure of this folder
 * asks of Redis, in one small interface (`RedisSeam`), and the scripts it runs. Each client
 * library has an adapter behind it (ioredis-seam.ts); seam.ts picks one by the client's shape.
 * A file of its own so that the modules that talk to Redis import it from below instead of from
 * each other.
 */
import type { Cluster, Redis } from 'ioredis';

/** An ioredis client (`new Redis(...)`) or cluster (`new Redis.Cluster(...)`). */
export type RedisClient = Redis | Cluster;

/** A Lua script the layer runs: its name (for the client's cache), source and key count. */
export interface RedisScript {
  readonly name: string;
  readonly lua: string;
  readonly keys: number;
}

/** An argument of a script: arrays are flattened into the command's arguments. */
export type RedisArgument = string | number | Buffer | readonly (string | number)[];

/**
 * Flags of a call. GROUPED: sent on a call's path (a check, an increment), so it may be written
 * with the other calls of its tick (write-groups.ts); syncs are not. BYTES: bulk replies come
 * back as Buffers (cells), not strings.
 */
export const GROUPED = 1;
export const BYTES = 2;

/** What the Redis layer asks of a client. */
export interface RedisSeam {
  /**
   * Runs `script` with `keys` and `args` (EVALSHA, and EVAL once when Redis does not have the
   * script, as after a restart), on the node that holds the keys' slot.
   */
  run(
    script: RedisScript,
    keys: readonly string[],
    args: readonly RedisArgument[],
    flags: number,
  ): Promise<unknown>;
  /** A command on one key (BITFIELD_RO, HGET). */
  call(
    command: string,
    key: string,
    args: readonly (string | number)[],
    flags: number,
  ): Promise<unknown>;
  /** A string's bytes and a hash's field, read at one moment (MULTI): null where missing. */
  readTogether(
    bytesKey: string,
    hash: string,
    field: string,
  ): Promise<[Buffer | null, string | null]>;
}
