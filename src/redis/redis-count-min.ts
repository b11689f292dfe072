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

import type { Key } from '../core.js';
import {
  CountMinSketch,
  checkAmount,
  checkOptionNames,
  encodeSketch,
  SATURATED,
  secretFingerprint,
  typeError,
} from '../core.js';
import { BYTES, GROUPED } from './client.js';
import { decodeCells, PLACE_OPTION_NAMES, type PlaceOptions, SketchPlace } from './place.js';
import { ADD, RAISE, READ } from './scripts.js';

/** Options of `new RedisCountMinSketch`: its place in Redis (PlaceOptions) and its rule. */
export interface RedisCountMinOptions extends PlaceOptions {
  /** Conservative update. Default false. */
  conservative?: boolean;
}

const OPTION_NAMES = [...PLACE_OPTION_NAMES, 'conservative'];

/**
 * A Count-Min sketch whose counters live in Redis, shared by every process that opens the same
 * `name` with the same secret and dimensions. Each update or read is one round trip; Redis holds
 * 4 * width * depth bytes, whatever the number of keys.
 */
export class RedisCountMinSketch {
  /** The sketch's name: its keys in Redis are `hotcount:{name}:...`. */
  readonly name: string;
  /** Counters per row. */
  readonly width: number;
  /** Rows. */
  readonly depth: number;
  /** Whether updates use the conservative rule (then `decrement` rejects with a TypeError). */
  readonly conservative: boolean;
  /** The Redis keys of this sketch: its cells and its header. */
  readonly keys: {
    /** The cells, one string: 32-bit big-endian integers, row after row. */
    cells: string;
    /** The hash that holds the shape and the total. */
    header: string;
  };
  private readonly place: SketchPlace;

  /**
   * Throws a TypeError or RangeError that names the option at fault. Sends nothing to Redis:
   * the first call checks (or sets) the shape.
   */
  constructor(options: RedisCountMinOptions) {
    if (options === null || typeof options !== 'object') {
      throw typeError('options', 'an object with redis, name and secret', options);
    }
    checkOptionNames('options', options, OPTION_NAMES);
    const conservative = options.conservative ?? false;
    if (typeof conservative !== 'boolean') {
      throw typeError('conservative', 'a boolean', conservative);
    }
    const rule = conservative ? 'conservative' : 'plain';
    const place = new SketchPlace(options, rule, 'sketch', 'shape or rule');
    this.place = place;
    this.name = place.name;
    this.width = place.width;
    this.depth = place.depth;
    this.conservative = conservative;
    this.keys = { cells: place.key('cells'), header: place.header };
  }

  /**
   * Adds `by` (default 1) to `key`; resolves to its estimate after the update. Rejects with a
   * RangeError when Redis holds a sketch of this name with another shape or secret.
   */
  async increment(key: Key, by = 1): Promise<number> {
    checkAmount(by);
    const shape = this.place.shape;
    const cells = this.place.cellsOf(key);
    const { cells: cellsKey, header } = this.keys;
    const script = this.conservative ? RAISE : ADD;
    const call = this.place.redis.run(script, [cellsKey, header], [shape, by, cells], GROUPED);
    return this.refused(call as Promise<number>);
  }

  /** Subtracts `by` (plain sketches only, as locally). */
  async decrement(key: Key, by = 1): Promise<number> {
    checkAmount(by);
    if (this.conservative) {
      throw new TypeError('decrement needs a plain sketch: conservative update cannot undo');
    }
    const shape = this.place.shape;
    const cells = this.place.cellsOf(key);
    const { cells: cellsKey, header } = this.keys;
    const call = this.place.redis.run(ADD, [cellsKey, header], [shape, -by, cells], GROUPED);
    return this.refused(call as Promise<number>);
  }

  /** The key's estimate: the least of its cells, read in one round trip. */
  async estimate(key: Key): Promise<number> {
    const cells = this.place.cellsOf(key);
    await this.checkShape();
    const args: (string | number)[] = [];
    for (const cell of cells) args.push('GET', 'i32', `#${cell}`);
    const values = (await this.place.redis.call(
      'BITFIELD_RO',
      this.keys.cells,
      args,
      GROUPED,
    )) as number[];
    let least = SATURATED;
    for (const value of values) if (value < least) least = value;
    return least;
  }

  /** N: the net sum of every update, from every process. */
  get total(): Promise<number> {
    return this.checkShape().then(async () =>
      Number((await this.place.redis.call('HGET', this.keys.header, ['total'], 0)) ?? 0),
    );
  }

  /** A local copy: a `CountMinSketch` with the same secret, cells and total, at one moment. */
  async toSketch(): Promise<CountMinSketch> {
    await this.checkShape();
    const size = this.width * this.depth;
    const [stored, total] = (await this.place.redis.run(
      READ,
      [this.keys.cells, this.keys.header],
      [],
      BYTES,
    )) as [Buffer, Buffer];
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
        total: Number(total.toString()),
        fingerprint: secretFingerprint(this.place.secret),
      },
      cells,
      this.place.secret,
    );
    return CountMinSketch.fromBytes(bytes, { secret: this.place.secret });
  }

  /** Checks (or sets) the shape once per instance, before the first read. */
  private checkShape(): Promise<void> {
    return this.place.checkShape();
  }

  /** A refused update's error as a RangeError that says what Redis holds. */
  private async refused<T>(reply: Promise<T>): Promise<T> {
    try {
      return await reply;
    } catch (error) {
      throw this.place.refusal(error);
    }
  }
}
