/**
 * What every structure of this folder shares: the client with the scripts defined on it, the
 * structure's place in Redis (`hotcount:{name}:...`, one hash tag, so Redis Cluster keeps it in
 * one slot), the key's cells hashed with the fleet's secret exactly as locally, and the shape
 * (dimensions, rule, the secret's fingerprint) that the first writer sets and every later one
 * must match.
 */

import {
  cellsOf,
  checkKey,
  copySecret,
  type Dimensions,
  dimensionsOf,
  hashKeyWords,
  type Key,
  KeyHasher,
  resolveDimensions,
  secretFingerprint,
  typeError,
} from '../core.js';
import type { RedisClient, RedisSeam } from './client.js';
import { SHAPE } from './scripts.js';
import { seamOf } from './seam.js';

/**
 * The cells of a Redis string, into `cells`: BITFIELD's integers are big-endian, and a string
 * shorter than the sketch (Redis grows it as cells are written) ends in zeros; a missing or empty
 * one is all zeros.
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

/** A name Redis keys can carry inside a hash tag. */
function checkName(name: unknown): string {
  if (typeof name !== 'string') throw typeError('name', 'a string', name);
  if (!/^[^{}\s]{1,200}$/.test(name)) {
    throw new RangeError(
      `name must be 1 to 200 characters without braces or spaces; received ${JSON.stringify(name.slice(0, 40))}`,
    );
  }
  return name;
}

/** The options every structure in Redis takes. */
export interface PlaceOptions {
  /**
   * The client, as the user made it: an ioredis or iovalkey `Redis` or `Cluster`, a node-redis
   * `createClient()` or `createCluster()` (connected), or a valkey-glide `GlideClient` or
   * `GlideClusterClient`.
   */
  redis: RedisClient;
  /** The structure's name: processes that give the same name (and secret) share it. */
  name: string;
  /** Shared by the fleet, at least 16 bytes. Required: a random one would share nothing. */
  secret: Uint8Array;
  /**
   * Counters per row. Default 16384. Not together with `epsilon`. Every process of the name
   * must give the same width and depth: Redis refuses another shape.
   */
  width?: number;
  /** Rows (independent hashes). Default 4. Not together with `delta`. */
  depth?: number;
  /** Relative error: width = ceil(e / epsilon). In (0, 1). Not together with `width`. */
  epsilon?: number;
  /** Failure probability: depth = ceil(ln(1 / delta)). In (0, 1). Not together with `depth`. */
  delta?: number;
}

/** The names of PlaceOptions, for option checks. */
export const PLACE_OPTION_NAMES: readonly string[] = [
  'redis',
  'name',
  'secret',
  'width',
  'depth',
  'epsilon',
  'delta',
];

/** One structure's place in Redis, its hashing and its shape (see the top comment). */
export class SketchPlace {
  readonly name: string;
  readonly width: number;
  readonly depth: number;
  readonly secret: Uint8Array;
  /** The client, behind the seam (client.ts). */
  readonly redis: RedisSeam;
  /** `width:depth:rule:fingerprint`, what the header holds. */
  readonly shape: string;
  /** The header hash: the shape and the total. */
  readonly header: string;
  private readonly hasher: KeyHasher;
  private readonly rowCells: Int32Array;
  private readonly rule: string;
  /** What a refusal calls the structure, and what else Redis may hold under its name. */
  private readonly noun: string;
  private readonly differs: string;
  /** Whether the shape was checked: true, a check under way, or false (not yet). */
  private checked: boolean | Promise<void> = false;

  /**
   * Validates the options every structure takes; `rule` names the structure's update rule,
   * `noun` what a refusal calls it ('sketch') and `differs` what else another structure of the
   * name may have ('shape or rule').
   */
  constructor(options: PlaceOptions, rule: string, noun: string, differs: string) {
    const { redis, name, secret, width, depth, epsilon, delta } = options;
    this.redis = seamOf('redis', redis);
    if (secret === undefined) {
      throw new TypeError('secret is required: the fleet shares one (at least 16 bytes)');
    }
    this.name = checkName(name);
    this.secret = copySecret(secret, 'secret');
    const dimensions = resolveDimensions({ width, depth, epsilon, delta });
    this.width = dimensions.width;
    this.depth = dimensions.depth;
    const fingerprint = Buffer.from(secretFingerprint(this.secret)).toString('hex');
    this.shape = `${this.width}:${this.depth}:${rule}:${fingerprint}`;
    this.rule = rule;
    this.noun = noun;
    this.differs = differs;
    this.header = this.key('header');
    const [k0, k1] = hashKeyWords(this.secret);
    this.hasher = new KeyHasher(k0, k1);
    this.rowCells = new Int32Array(this.depth);
  }

  get dimensions(): Dimensions {
    return dimensionsOf(this.width, this.depth);
  }

  /** The Redis key `hotcount:{name}:<part>`. */
  key(part: string): string {
    return `hotcount:{${this.name}}:${part}`;
  }

  /** The Redis key of a limiter's window (or era) number `window`: `hotcount:{name}:w:<n>`. */
  windowKey(window: number): string {
    return this.key(`w:${window}`);
  }

  /** The key's cell in each row, a new array (for arguments to Redis). */
  cellsOf(key: Key): number[] {
    return Array.from(this.cellsInPlace(key));
  }

  /** The key's cell in each row, in an array of this place's, overwritten by the next call. */
  cellsInPlace(key: Key): Int32Array {
    const hasher = this.hasher;
    hasher.hash(checkKey('key', key));
    return cellsOf(hasher.h1, hasher.h2, this.width, this.depth, this.rowCells);
  }

  /** The cells of a hash `cellsInPlace` made (its `h1`, `h2`), in the same array. */
  cellsOfHash(h1: number, h2: number): Int32Array {
    return cellsOf(h1, h2, this.width, this.depth, this.rowCells);
  }

  /** The two words of the last key `cellsInPlace` hashed (a guard keeps them, not the key). */
  get h1(): number {
    return this.hasher.h1;
  }

  get h2(): number {
    return this.hasher.h2;
  }

  /** Whether the shape was checked already (the hot path then skips `checkShape`). */
  get shapeChecked(): boolean {
    return this.checked === true;
  }

  /**
   * Checks (or sets) the shape, once per instance; a refusal rejects with `refusal`'s
   * RangeError. A failure other than a refusal is asked again next time.
   */
  checkShape(): Promise<void> {
    if (this.checked === true) return Promise.resolve();
    if (this.checked === false) {
      this.checked = this.redis.run(SHAPE, [this.header, this.header], [this.shape, 0], 0).then(
        () => {
          this.checked = true;
        },
        (error) => {
          this.checked = false; // Redis may come back: ask again next time
          throw this.refusal(error);
        },
      );
    }
    return this.checked;
  }

  /**
   * A script's shape refusal as a RangeError that says what Redis holds under the name and how
   * this structure differs; any other error as it is.
   */
  refusal(error: unknown): unknown {
    // glide words a script error as "CODE: message", the others as "CODE message".
    const held = /HOTCOUNT_SHAPE:? (\d+):(\d+):(\w+):([0-9a-f]+)/.exec(
      (error as Error)?.message ?? '',
    );
    if (held === null) return error;
    const [, width, depth, rule, fingerprint] = held;
    const theirs = `${width} x ${depth}, ${rule}`;
    const mine = `${this.width} x ${this.depth}, ${this.rule}`;
    const what =
      theirs !== mine
        ? `is ${theirs}, not ${mine} (another ${this.differs})`
        : fingerprint !== this.shape.split(':')[3]
          ? 'was made with another secret'
          : 'differs';
    return new RangeError(
      `the Redis ${this.noun} "${this.name}" ${what}: refused, nothing written`,
    );
  }
}
