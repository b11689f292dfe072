/**
 * The direct rate limiter's checks of one tick, sent to Redis together: one WINDOW script call
 * (scripts.ts) for the checks of a limiter that fall in one window, up to a batch's size, decided
 * there one after the other in the order they were made. Each check gets what a script of its
 * own would have found; the fleet sees the same counts; Redis and the client each run one command
 * where they ran one per check.
 *
 * Why: a check's own work in Redis is a few cells, less than what running any script costs
 * (bench/REPORT.md, 38: the script's context, arguments, reply and socket); at 64 checks in flight
 * Redis spent more per check than rate-limiter-flexible's one INCRBY per key. The checks of a
 * tick are the ones made before the process goes back to its event loop (the replies of one read
 * from the socket, say): they wait for nothing but that tick's end, as the write groups do.
 */
import type { RedisArgument } from './client.js';
import type { SketchPlace } from './place.js';
import { WINDOW } from './scripts.js';

/** A check's part of WINDOW's reply: the key's count, the previous window's, ceiling, floor. */
export type Window = [number, number, number, number];

/** Checks per call at most, and cells per call at most (Lua's unpack of the reads and sets). */
const MAX_CHECKS = 16;
const MAX_CELLS = 1024;

/** What is the same for every check of a limiter: its algorithm and rule. */
export interface WindowRule {
  /** 's' (sliding window) or 'g' (gcra). */
  readonly algorithm: 's' | 'g';
  /** The limit ('s') or an era in ticks ('g'). */
  readonly rule: number;
  /** burst * T in ticks ('g'), else 0. */
  readonly horizon: number;
}

export class WindowBatch {
  /** The window the batch being gathered is for, or -1 when there is none. */
  private window = -1;
  private args: RedisArgument[] = [];
  private resolvers: ((window: Window) => void)[] = [];
  private rejecters: ((error: unknown) => void)[] = [];
  private readonly maxChecks: number;
  private readonly endOfTick = () => this.send();

  constructor(
    private readonly place: SketchPlace,
    private readonly rule: WindowRule,
  ) {
    this.maxChecks = Math.max(1, Math.min(MAX_CHECKS, Math.floor(MAX_CELLS / place.depth)));
  }

  /**
   * Adds a check of `amount` (0 peeks) at `at` (the fraction of the window elapsed, or the time
   * in ticks of the era) for `cells` to the window `window`'s batch, whose key expires in
   * `expireMs`. Resolves with what the check found.
   */
  check(window: number, expireMs: number, amount: number, at: number, cells: number[]) {
    if (window !== this.window) {
      // Another window: the batch gathered so far goes now, in the order its checks came.
      if (this.window !== -1) this.send();
      this.window = window;
      const { algorithm, rule, horizon } = this.rule;
      this.args.push(algorithm, this.place.depth, expireMs, rule, horizon);
      process.nextTick(this.endOfTick);
    }
    const args = this.args;
    args.push(amount, at);
    for (let i = 0; i < cells.length; i++) args.push(`#${cells[i]}`);
    const found = new Promise<Window>((resolve, reject) => {
      this.resolvers.push(resolve);
      this.rejecters.push(reject);
    });
    if (this.resolvers.length === this.maxChecks) this.send();
    return found;
  }

  /** Sends the batch gathered, if any. */
  private send(): void {
    const window = this.window;
    if (window === -1) return;
    const { args, resolvers, rejecters, place } = this;
    this.window = -1;
    this.args = [];
    this.resolvers = [];
    this.rejecters = [];
    const keys = [place.windowKey(window), place.header, place.windowKey(window - 1)];
    // Not GROUPED: a batch is written at once, not held for the write groups (write-groups.ts)
    // until the tick's end, so that Redis runs the first batch of a tick while the client makes
    // the next. Held, the client and Redis took turns (bench/REPORT.md, 38: 0.7x against 1.1x).
    place.redis.run(WINDOW, keys, args, 0).then(
      (reply) => {
        const flat = reply as number[];
        for (let j = 0; j < resolvers.length; j++) {
          resolvers[j]([flat[4 * j], flat[4 * j + 1], flat[4 * j + 2], flat[4 * j + 3]]);
        }
      },
      (error) => {
        for (const reject of rejecters) reject(error);
      },
    );
  }
}
