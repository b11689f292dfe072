/**
 * Inflight across a fleet: how many of a key's requests are in progress in every process, in a
 * plain sketch in Redis (`hotcount:{name}:cells`), with guards that give back exactly what they
 * took, once (limits/inflight.ts, over Redis).
 *
 * A process that dies must not hold its counts forever. Each process holds a lease (a sorted
 * set, `hotcount:{name}:leases`: process id -> end of lease, by Redis's clock), renewed by
 * every call and every `leaseMs / 3` by a timer, and records each guard it holds
 * (`hotcount:{name}:g:<process id>`: guard id -> amount and cells). The first call of any
 * process after a lease has ended gives back every guard of that process and deletes its
 * records. So a dead process's share is gone `leaseMs` after its last renewal (default 10 s), at
 * the next call on the same name. Memory in Redis: the sketch's cells, plus one record per
 * guard held at the time (bounded by what is in progress, not by the number of keys).
 *
 * Every operation is one script (scripts.ts, INFLIGHT_SCRIPT), atomic: `tryAcquire` checks the
 * limit and adds in one step, so the fleet never lets more than `limit` holders in at once. It
 * is also safe to repeat: a guard's id is in its record, so an acquire sent again after a lost
 * reply is not added twice, and a release gives back only a recorded guard, once. A release
 * that fails (Redis away) is sent again by the timer until Redis takes it, or until the lease
 * ends and the whole share goes: either way, once. A process whose lease ends while it lives
 * (paused, or cut off from Redis, for longer than `leaseMs`) loses its share in Redis: its
 * guards no longer count there, and their releases do nothing.
 */
import { randomUUID } from 'node:crypto';
import type { Key } from '../core.js';
import { checkCount, checkOptionNames, integerIn, typeError } from '../core.js';
import { GROUPED } from './client.js';
import { PLACE_OPTION_NAMES, type PlaceOptions, SketchPlace } from './place.js';
import { INFLIGHT } from './scripts.js';
import { withDeadline } from './staleness.js';

/** Options of `new RedisInflight`: its place in Redis (PlaceOptions), its lease and timeout. */
export interface RedisInflightOptions extends PlaceOptions {
  /** How long a process's share outlives its last renewal, in ms. Default 10,000. */
  leaseMs?: number;
  /** How long an operation may wait for Redis before it rejects. Default 1000 ms. */
  timeoutMs?: number;
}

const OPTION_NAMES = [...PLACE_OPTION_NAMES, 'leaseMs', 'timeoutMs'];

/** One acquisition in Redis: `release()` gives it back, exactly once. */
export class RedisInflightGuard {
  /** The key's estimate in the fleet just after acquiring (this acquisition included). */
  readonly count: number;
  private owner: RedisInflight | null;
  private readonly id: number;
  private readonly cells: number[];
  private releasing: Promise<void> | null = null;

  /** @internal */
  constructor(owner: RedisInflight, id: number, cells: number[], count: number) {
    this.owner = owner;
    this.id = id;
    this.cells = cells;
    this.count = count;
  }

  /** Whether this guard still holds its amount (release not yet called). */
  get held(): boolean {
    return this.owner !== null;
  }

  /**
   * Gives back what this guard acquired; later calls return the same promise. It never
   * rejects: a release Redis did not take is sent again by the timer.
   */
  release(): Promise<void> {
    if (this.releasing === null) {
      const owner = this.owner as RedisInflight;
      this.owner = null;
      this.releasing = owner.giveBack(this.id, this.cells);
    }
    return this.releasing;
  }

  /** `release()`, for `await using guard = await inflight.acquire(key)`. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.release();
  }
}

/**
 * Requests in progress per key across a fleet, counted in Redis: every call is one atomic round
 * trip, so `tryAcquire` never lets more than `limit` holders in at once. A process that dies
 * loses its share `leaseMs` after its last renewal, at the next call of any process on the name.
 */
export class RedisInflight {
  /** The counter's name: its keys in Redis are `hotcount:{name}:...`. */
  readonly name: string;
  /** Counters per row. */
  readonly width: number;
  /** Rows. */
  readonly depth: number;
  /** How long this process's share outlives its last renewal in Redis, in ms. */
  readonly leaseMs: number;
  /** How long an operation may wait for Redis before it rejects, in ms. */
  readonly timeoutMs: number;
  /** This process's id in the leases. */
  readonly processId = randomUUID();
  private readonly place: SketchPlace;
  private readonly keys: [string, string, string, string];
  private readonly guardsPrefix: string;
  private nextId = 1;
  /** Releases Redis did not take yet: guard id -> cells. */
  private readonly unreleased = new Map<number, number[]>();
  private readonly timer: NodeJS.Timeout;

  /**
   * Throws a TypeError or RangeError that names the option at fault. Starts a timer (that does
   * not keep the process alive) renewing the lease every `leaseMs / 3`; `close` stops it.
   */
  constructor(options: RedisInflightOptions) {
    if (options === null || typeof options !== 'object') {
      throw typeError('options', 'an object with redis, name and secret', options);
    }
    checkOptionNames('options', options, OPTION_NAMES);
    const { leaseMs = 10_000, timeoutMs = 1000, ...where } = options;
    this.leaseMs = integerIn('leaseMs', leaseMs, 30, 86_400_000);
    this.timeoutMs = integerIn('timeoutMs', timeoutMs, 1, 3_600_000);
    const place = new SketchPlace(where, 'inflight', 'inflight', 'kind or shape');
    this.place = place;
    this.name = place.name;
    this.width = place.width;
    this.depth = place.depth;
    this.guardsPrefix = place.key('g:');
    this.keys = [
      place.key('cells'),
      place.header,
      place.key('leases'),
      `${this.guardsPrefix}${this.processId}`,
    ];
    this.timer = setInterval(() => void this.renew(), Math.floor(this.leaseMs / 3));
    this.timer.unref();
  }

  /** One operation in Redis: [done, the key's estimate]. */
  private run(op: string, id: number, n: number, limit: number, cells: number[]) {
    const args = [this.place.shape, op, this.processId, this.leaseMs, id, n, limit];
    const call = this.place.redis.run(
      INFLIGHT,
      this.keys,
      [...args, this.guardsPrefix, cells],
      GROUPED,
    ) as Promise<[number, number]>;
    return withDeadline(call, this.timeoutMs).catch((error) => {
      throw this.place.refusal(error);
    });
  }

  /** Adds `n` (default 1) to `key` in the fleet; the guard gives it back. */
  async acquire(key: Key, n = 1): Promise<RedisInflightGuard> {
    checkCount('n', n, 1);
    const cells = this.place.cellsOf(key);
    const id = this.nextId++;
    const [, count] = await this.acquired(this.run('a', id, n, 0, cells), id, cells);
    return new RedisInflightGuard(this, id, cells, count);
  }

  /**
   * Adds `n` (default 1) to `key` if the key's estimate over the fleet stays within `limit`
   * (checked and added in one atomic step); else null, with nothing held.
   */
  async tryAcquire(key: Key, limit: number, n = 1): Promise<RedisInflightGuard | null> {
    checkCount('limit', limit, 1);
    checkCount('n', n, 1);
    const cells = this.place.cellsOf(key);
    const id = this.nextId++;
    const [done, count] = await this.acquired(this.run('a', id, n, limit, cells), id, cells);
    return done === 1 ? new RedisInflightGuard(this, id, cells, count) : null;
  }

  /**
   * An acquire's reply; when it fails, the acquire may still land in Redis (sent, not
   * answered): its release goes to the timer, so that no one holds a guard nobody can release.
   */
  private async acquired(reply: Promise<[number, number]>, id: number, cells: number[]) {
    try {
      return await reply;
    } catch (error) {
      if (!(error instanceof RangeError)) this.unreleased.set(id, cells);
      throw error;
    }
  }

  /** The key's estimate over the fleet: never below the guards held for it. */
  async estimate(key: Key): Promise<number> {
    const [, count] = await this.run('e', 0, 0, 0, this.place.cellsOf(key));
    return count;
  }

  /** @internal A guard's release; Redis not answering leaves it to the timer. */
  async giveBack(id: number, cells: number[]): Promise<void> {
    try {
      await this.run('r', id, 0, 0, cells);
    } catch {
      this.unreleased.set(id, cells);
    }
  }

  /** Renews the lease and sends the releases Redis did not take. */
  private async renew(): Promise<void> {
    try {
      await this.run('l', 0, 0, 0, []);
      for (const [id, cells] of this.unreleased) {
        await this.run('r', id, 0, 0, cells);
        this.unreleased.delete(id);
      }
    } catch {
      // Redis is away: the next renewal tries again; the lease covers the meantime.
    }
  }

  /** Stops renewing the lease: what this process holds goes leaseMs after the last renewal. */
  close(): void {
    clearInterval(this.timer);
  }
}
