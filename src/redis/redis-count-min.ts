/**
 * A Count-Min sketch whose counters live in Redis, for a fleet: every process and host that
 * opens the same `name` with the same secret and dimensions counts into one sketch.
 *
 * Storage. The cells are one Redis string, `hotcount:{name}:cells`, cell i the signed 32-bit
 * big-endian integer at bit 32 i (BITFIELD's `i32 #i`), row after row as in the local sketch; a
 * hash `hotcount:{name}:header` holds the shape (width, depth, rule and the secret's
 * fingerprint, never the secret) and the total. Both names carry the hash tag `{name}`, so
 * Redis Cluster keeps them in one slot and a script can touch both. Memory in Redis is
 * 4 * width * depth bytes, whatever the number of keys.
 *
 * The key is hashed here, with the secret, exactly as the local sketch hashes it; Redis sees
 * cell numbers only. An update is one round trip: a script (scripts.ts) that checks the shape,
 * applies the rule to the key's cells atomically and returns the new estimate. A sketch of this
 * name with another shape or secret is refused before anything is written.
 *
 * Concurrent calls on one client are pipelined by it (ioredis writes commands without waiting
 * for replies), so a process pays one round trip of latency per call, not per call in series.
 */
import type { Cluster, Redis } from 'ioredis';
import { checkOptionNames, typeError } from '../errors.js';
import { checkKey, type Key, KeyHasher } from '../hash/key-hasher.js';
import { copySecret, hashKeyWords, secretFingerprint } from '../hash/secret.js';
import { CountMinSketch, checkAmount } from '../sketch/count-min.js';
import { resolveDimensions } from '../sketch/dimensions.js';
import { encodeSketch } from '../sketch/format.js';
import { ADD_SCRIPT, PUSH_SCRIPT, RAISE_SCRIPT, SHAPE_SCRIPT, SLIDING_SCRIPT } from './scripts.js';

export type RedisClient = Redis | Cluster;

/**
 * The cells of a Redis string, into `cells`: BITFIELD's integers are big-endian, and a string
 * shorter than the sketch (Redis grows it as cells are written) ends in zeros.
 */
export function decodeCells(stored: Buffer | null, cells: Int32Array): Int32Array {
  cells.fill(0);
  if (stored === null) return cells;
  const size = cells.length;
  const whole = Math.min(size, stored.length >> 2);
  for (let i = 0; i < whole; i++) cells[i] = stored.readInt32BE(i * 4);
  if (whole < size && (stored.length & 3) > 0) {
    const last = Buffer.alloc(4);
    stored.copy(last, 0, whole * 4);
    cells[whole] = last.readInt32BE(0);
  }
  return cells;
}

/** The key's cell in each row, as the local sketch of the same secret and width finds it. */
export function keyCells(hasher: KeyHasher, width: number, depth: number, key: Key): number[] {
  hasher.hash(checkKey('key', key));
  const { h1, h2 } = hasher;
  const cells: number[] = [];
  for (let row = 0; row < depth; row++) {
    const g = (h1 + Math.imul(row, h2)) >>> 0;
    cells.push(row * width + ((g * width * INV_2_32) | 0));
  }
  return cells;
}

export interface RedisCountMinOptions {
  /** An ioredis `Redis` or `Cluster`. */
  redis: RedisClient;
  /** The sketch's name: processes that give the same name (and secret) share it. */
  name: string;
  /** Shared by the fleet, at least 16 bytes. Required: a random one would share nothing. */
  secret: Uint8Array;
  width?: number;
  depth?: number;
  epsilon?: number;
  delta?: number;
  /** Conservative update. Default false. */
  conservative?: boolean;
}

const OPTION_NAMES = [
  'redis',
  'name',
  'secret',
  'width',
  'depth',
  'epsilon',
  'delta',
  'conservative',
];

/** Commands this module defines on a client, once per client. */
export interface HotcountCommands {
  hotcountAdd(cells: string, header: string, ...args: (string | number)[]): Promise<number>;
  hotcountRaise(cells: string, header: string, ...args: (string | number)[]): Promise<number>;
  hotcountShape(cells: string, header: string, ...args: (string | number)[]): Promise<number>;
  hotcountSliding(
    cells: string,
    header: string,
    previous: string,
    ...args: (string | number)[]
  ): Promise<[number, number, number]>;
  hotcountPushBuffer(
    cells: string,
    header: string,
    pushed: string,
    ...args: (string | number)[]
  ): Promise<Buffer>;
}

const defined = new WeakSet<object>();

export function commands(redis: RedisClient): RedisClient & HotcountCommands {
  if (!defined.has(redis)) {
    // EVALSHA, falling back to EVAL once when Redis has not seen the script (ioredis does it).
    redis.defineCommand('hotcountAdd', { numberOfKeys: 2, lua: ADD_SCRIPT });
    redis.defineCommand('hotcountRaise', { numberOfKeys: 2, lua: RAISE_SCRIPT });
    redis.defineCommand('hotcountShape', { numberOfKeys: 2, lua: SHAPE_SCRIPT });
    redis.defineCommand('hotcountPush', { numberOfKeys: 3, lua: PUSH_SCRIPT });
    redis.defineCommand('hotcountSliding', { numberOfKeys: 3, lua: SLIDING_SCRIPT });
    defined.add(redis);
  }
  return redis as RedisClient & HotcountCommands;
}

/** A name Redis keys can carry inside a hash tag. */
export function checkName(name: unknown): string {
  if (typeof name !== 'string') throw typeError('name', 'a string', name);
  if (!/^[^{}\s]{1,200}$/.test(name)) {
    throw new RangeError(
      `name must be 1 to 200 characters without braces or spaces; received ${JSON.stringify(name.slice(0, 40))}`,
    );
  }
  return name;
}

const SATURATED = 0x7fffffff;
/** The local sketch's multiply-shift, in the same doubles (see sketch/count-min.ts). */
const INV_2_32 = 1 / 4294967296;

export class RedisCountMinSketch {
  readonly name: string;
  readonly width: number;
  readonly depth: number;
  readonly conservative: boolean;
  /** The Redis keys of this sketch: its cells and its header. */
  readonly keys: { cells: string; header: string };
  private readonly redis: RedisClient & HotcountCommands;
  private readonly secretBytes: Uint8Array;
  private readonly shape: string;
  private readonly hasher: KeyHasher;
  private ready: Promise<void> | null = null;

  constructor(options: RedisCountMinOptions) {
    if (options === null || typeof options !== 'object') {
      throw typeError('options', 'an object with redis, name and secret', options);
    }
    checkOptionNames('options', options, OPTION_NAMES);
    const { redis, name, secret, conservative = false, ...sizing } = options;
    if (redis === null || typeof redis !== 'object' || typeof redis.defineCommand !== 'function') {
      throw typeError('redis', 'an ioredis Redis or Cluster', redis);
    }
    if (secret === undefined) {
      throw new TypeError('secret is required: the fleet shares one (at least 16 bytes)');
    }
    if (typeof conservative !== 'boolean')
      throw typeError('conservative', 'a boolean', conservative);
    this.name = checkName(name);
    this.secretBytes = copySecret(secret, 'secret');
    const { width, depth } = resolveDimensions(sizing);
    this.width = width;
    this.depth = depth;
    this.conservative = conservative;
    this.keys = { cells: `hotcount:{${name}}:cells`, header: `hotcount:{${name}}:header` };
    const fingerprint = Buffer.from(secretFingerprint(this.secretBytes)).toString('hex');
    this.shape = `${width}:${depth}:${conservative ? 'conservative' : 'plain'}:${fingerprint}`;
    const [k0, k1] = hashKeyWords(this.secretBytes);
    this.hasher = new KeyHasher(k0, k1);
    this.redis = commands(redis);
  }

  private cellsOf(key: Key): number[] {
    return keyCells(this.hasher, this.width, this.depth, key);
  }

  /**
   * Adds `by` (default 1) to `key`; resolves to its estimate after the update. Rejects with a
   * RangeError when Redis holds a sketch of this name with another shape or secret.
   */
  async increment(key: Key, by = 1): Promise<number> {
    checkAmount(by);
    const cells = this.cellsOf(key);
    const { cells: cellsKey, header } = this.keys;
    const run = this.conservative ? this.redis.hotcountRaise : this.redis.hotcountAdd;
    return this.refused(run.call(this.redis, cellsKey, header, this.shape, by, ...cells));
  }

  /** Subtracts `by` (plain sketches only, as locally). */
  async decrement(key: Key, by = 1): Promise<number> {
    checkAmount(by);
    if (this.conservative) {
      throw new TypeError('decrement needs a plain sketch: conservative update cannot undo');
    }
    const cells = this.cellsOf(key);
    const { cells: cellsKey, header } = this.keys;
    return this.refused(this.redis.hotcountAdd(cellsKey, header, this.shape, -by, ...cells));
  }

  /** The key's estimate: the least of its cells, read in one round trip. */
  async estimate(key: Key): Promise<number> {
    const cells = this.cellsOf(key);
    await this.checkShape();
    const args: (string | number)[] = [];
    for (const cell of cells) args.push('GET', 'i32', `#${cell}`);
    const values = (await this.redis.call('BITFIELD_RO', this.keys.cells, ...args)) as number[];
    let least = SATURATED;
    for (const value of values) if (value < least) least = value;
    return least;
  }

  /** N: the net sum of every update, from every process. */
  get total(): Promise<number> {
    return this.checkShape().then(async () =>
      Number((await this.redis.hget(this.keys.header, 'total')) ?? 0),
    );
  }

  /** A local copy: a `CountMinSketch` with the same secret, cells and total, at one moment. */
  async toSketch(): Promise<CountMinSketch> {
    await this.checkShape();
    const size = this.width * this.depth;
    const [[cellsError, stored], [totalError, total]] = (await this.redis
      .multi()
      .getBuffer(this.keys.cells)
      .hget(this.keys.header, 'total')
      .exec()) as [[Error | null, Buffer | null], [Error | null, string | null]];
    if (cellsError !== null) throw cellsError;
    if (totalError !== null) throw totalError;
    const cells = decodeCells(stored, new Int32Array(size));
    let saturated = false;
    for (let i = 0; i < size; i++) {
      if (cells[i] === SATURATED || cells[i] === -SATURATED) saturated = true;
    }
    const bytes = encodeSketch(
      {
        width: this.width,
        depth: this.depth,
        conservative: this.conservative,
        saturated,
        total: Number(total ?? 0),
        fingerprint: secretFingerprint(this.secretBytes),
      },
      cells,
      this.secretBytes,
    );
    return CountMinSketch.fromBytes(bytes, { secret: this.secretBytes });
  }

  /** Checks (or sets) the shape once per instance, before the first read. */
  private checkShape(): Promise<void> {
    if (this.ready === null) {
      const { cells, header } = this.keys;
      this.ready = this.refused(this.redis.hotcountShape(cells, header, this.shape, 0)).then(
        () => {},
        (error) => {
          this.ready = null; // Redis may come back: ask again next time
          throw error;
        },
      );
    }
    return this.ready;
  }

  /** A shape refusal from the scripts as a RangeError that says what Redis holds. */
  private async refused<T>(reply: Promise<T>): Promise<T> {
    try {
      return await reply;
    } catch (error) {
      const message = (error as Error).message ?? '';
      const held = /HOTCOUNT_SHAPE (\d+):(\d+):(\w+):([0-9a-f]+)/.exec(message);
      if (held === null) throw error;
      const [, width, depth, rule, fingerprint] = held;
      const theirs = `${width} x ${depth}, ${rule}`;
      const mine = `${this.width} x ${this.depth}, ${this.conservative ? 'conservative' : 'plain'}`;
      const what =
        theirs !== mine
          ? `is ${theirs}, not ${mine}`
          : fingerprint !== this.shape.split(':')[3]
            ? 'was made with another secret'
            : 'differs';
      throw new RangeError(`the Redis sketch "${this.name}" ${what}: refused, nothing written`);
    }
  }
}
