/**
 * The seam between the Redis layer and a client library: what every structure of this folder
 * asks of Redis, in one small interface (`RedisSeam`: run a script, run a command), and the
 * clients it takes (`RedisClient`). Each client library has an adapter behind the seam
 * (ioredis-seam.ts; node-redis-seam.ts and glide-seam.ts over raw-seam.ts); seam.ts picks one by
 * the client's shape. A file of its own so that the modules that talk to Redis import it from
 * below instead of from each other.
 *
 * The seam has no connection events: the layer tells that Redis went from its calls failing or
 * not answering within a timeout (staleness.ts), the same way with every client, and a script
 * Redis lost in a restart is sent again by the adapter (NOSCRIPT).
 *
 * The client types are shapes (the methods the adapters call), not the libraries' own types, so
 * that the published types need none of the clients installed.
 */

/** An ioredis (5, 6) or iovalkey client or cluster: `new Redis()`, `new Redis.Cluster()`. */
export interface IoredisClient {
  /** Defines a script as a command of the client (hotcount's scripts, once per client). */
  defineCommand(name: string, definition: { numberOfKeys?: number; lua: string }): void;
  /** Sends one command (hotcount's reads). */
  call(command: string, ...args: (string | number | Buffer)[]): Promise<unknown>;
}

/** A node-redis (5, 6) client: `createClient()`, connected. */
export interface NodeRedisClient {
  /** Sends one command as its arguments (hotcount's scripts and reads). */
  sendCommand(args: readonly (string | Buffer)[], options?: object): Promise<unknown>;
  /** Part of the shape that tells a node-redis client; hotcount does not call it. */
  withTypeMapping(mapping: object): unknown;
}

/** A node-redis (5, 6) cluster: `createCluster()`, connected. */
export interface NodeRedisCluster {
  /** Sends one command to the node that holds `firstKey`'s slot (hotcount's scripts, reads). */
  sendCommand(
    firstKey: string | Buffer | undefined,
    isReadonly: boolean | undefined,
    args: readonly (string | Buffer)[],
    options?: object,
  ): Promise<unknown>;
  /** Part of the shape that tells a node-redis cluster; hotcount does not call it. */
  getSlotMaster(slot: number): unknown;
}

/** A valkey-glide 2 client or cluster client: `GlideClient.createClient()`, `GlideClusterClient`. */
export interface GlideClient {
  /** Sends one command as its arguments (hotcount's scripts and reads), with a decoder. */
  customCommand(args: (string | Buffer)[], options?: object): Promise<unknown>;
  /** Part of the shape that tells a glide client; hotcount does not call it. */
  invokeScript(script: never, options?: object): Promise<unknown>;
}

/** The clients `hotcount/redis` takes: the user's own, as it is. */
export type RedisClient = IoredisClient | NodeRedisClient | NodeRedisCluster | GlideClient;

/** A Lua script the layer runs: its name (for the client's cache), source, key count and SHA-1. */
export interface RedisScript {
  readonly name: string;
  readonly lua: string;
  readonly keys: number;
  readonly sha: string;
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
   * script, as after a restart), on the node that holds the keys' slot (they share one: every
   * key of a structure carries its hash tag).
   */
  run(
    script: RedisScript,
    keys: readonly string[],
    args: readonly RedisArgument[],
    flags: number,
  ): Promise<unknown>;
  /** A command on one key (BITFIELD_RO, HGET): integers as numbers, bulk strings as strings. */
  call(
    command: string,
    key: string,
    args: readonly (string | number)[],
    flags: number,
  ): Promise<unknown>;
}
