/**
 * Whether a process's view of Redis is fresh, for whoever reads it (status) and listens (events):
 * 'stale' once when a sync or check fails or is not answered in time, 'sync' once when Redis
 * answers again. One copy for the local-first sketch and the limiters.
 */
import type { EventEmitter } from 'node:events';

/** Whether a structure's view of Redis is fresh: what its `status` returns, a copy. */
export interface SyncStatus {
  /** True while Redis did not answer the last sync (or check): answers are from process memory. */
  stale: boolean;
  /** When Redis last answered (Date.now()), or null before it first did. */
  lastSyncAt: number | null;
  /** The last failure, while stale. */
  error: Error | null;
}

/**
 * A local-first structure's sync with Redis: every `syncMs` (a timer that does not keep the
 * process alive) and on `flush()`, one at a time (a flush while one runs joins it). A sync that
 * fails makes the view stale, one that succeeds fresh; a RangeError (a shape Redis refused) is
 * the caller's mistake, not Redis away, and leaves the status as it was.
 */
export class SyncLoop {
  readonly staleness: Staleness;
  private running: Promise<void> | null = null;
  private readonly timer: NodeJS.Timeout;

  constructor(
    emitter: EventEmitter,
    syncMs: number,
    private readonly sync: () => Promise<void>,
  ) {
    this.staleness = new Staleness(emitter);
    this.timer = setInterval(() => void this.flush().catch(() => {}), syncMs);
    this.timer.unref();
  }

  flush(): Promise<void> {
    if (this.running === null) {
      this.running = this.sync()
        .then(
          () => this.staleness.synced(),
          (error) => {
            if (!(error instanceof RangeError)) this.staleness.failed(error);
            throw error;
          },
        )
        .finally(() => {
          this.running = null;
        });
    }
    return this.running;
  }

  /** No more syncs by the timer (flush still syncs). */
  stop(): void {
    clearInterval(this.timer);
  }
}

/** A sync's default timeout: 4 * syncMs, within 1000 and 3,600,000 ms. */
export function syncTimeoutMs(syncMs: number): number {
  return Math.min(3_600_000, Math.max(1000, 4 * syncMs));
}

/** What a process does while its view is stale. */
export type StalePolicy = 'local' | 'open' | 'closed';

export class Staleness {
  private state: SyncStatus = { stale: false, lastSyncAt: null, error: null };

  constructor(private readonly emitter: EventEmitter) {}

  get status(): SyncStatus {
    return { ...this.state };
  }

  get stale(): boolean {
    return this.state.stale;
  }

  failed(error: unknown): void {
    const wasStale = this.state.stale;
    const reason = error instanceof Error ? error : new Error(String(error));
    this.state = { stale: true, lastSyncAt: this.state.lastSyncAt, error: reason };
    // 'error' would throw without a listener: the event is 'stale', for those who care.
    if (!wasStale) this.emitter.emit('stale', reason);
  }

  /** Redis answered: 'sync' if the view was stale. Called on every direct check: no garbage. */
  synced(): void {
    const state = this.state;
    const wasStale = state.stale;
    state.stale = false;
    state.lastSyncAt = Date.now();
    state.error = null;
    if (wasStale) this.emitter.emit('sync');
  }
}

/** A call waiting for Redis, and how to end it. */
interface Waiting {
  deadline: number;
  reject: (error: Error) => void;
  done: boolean;
}

/**
 * The calls waiting with one timeout, on one timer: with one timeout, deadlines come in the order
 * the calls started, so a queue holds them sorted and a sweep ends those at its head. A timer per
 * call (setTimeout, clearTimeout) cost a third of a direct check's time at 64 calls in flight.
 */
class Deadlines {
  private readonly queue: (Waiting | undefined)[] = [];
  private head = 0;
  private timer: NodeJS.Timeout | null = null;
  private readonly sweepMs: number;

  constructor(private readonly timeoutMs: number) {
    // A call ends between timeoutMs and timeoutMs + sweepMs after it started.
    this.sweepMs = Math.max(1, Math.min(50, Math.floor(timeoutMs / 4)));
  }

  wait<T>(promise: Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const waiting: Waiting = { deadline: Date.now() + this.timeoutMs, reject, done: false };
      this.queue.push(waiting);
      if (this.timer === null) {
        this.timer = setInterval(() => this.sweep(), this.sweepMs);
        this.timer.unref();
      }
      promise.then(
        (value) => {
          if (waiting.done) return;
          waiting.done = true;
          resolve(value);
        },
        (error) => {
          if (waiting.done) return;
          waiting.done = true;
          reject(error);
        },
      );
    });
  }

  private sweep(): void {
    const now = Date.now();
    const queue = this.queue;
    while (this.head < queue.length) {
      const waiting = queue[this.head] as Waiting;
      if (!waiting.done && waiting.deadline > now) break;
      queue[this.head++] = undefined;
      if (!waiting.done) {
        waiting.done = true;
        waiting.reject(new Error(`Redis did not answer within ${this.timeoutMs} ms`));
      }
    }
    if (this.head === queue.length) {
      queue.length = 0;
      this.head = 0;
      clearInterval(this.timer as NodeJS.Timeout);
      this.timer = null;
    } else if (this.head > 1024 && this.head * 2 > queue.length) {
      queue.splice(0, this.head);
      this.head = 0;
    }
  }
}

const deadlines = new Map<number, Deadlines>();

/**
 * `promise`, or a rejection once `timeoutMs` (and at most 50 ms more) have passed without it
 * settling. The work may still finish in Redis: every caller here is safe to repeat or to give
 * up on.
 */
export function withDeadline<T>(promise: Promise<T>, timeoutMs: number): Promise<T> {
  let queue = deadlines.get(timeoutMs);
  if (queue === undefined) {
    queue = new Deadlines(timeoutMs);
    deadlines.set(timeoutMs, queue);
  }
  return queue.wait(promise);
}

export function checkStalePolicy(value: unknown): StalePolicy {
  if (value === undefined) return 'local';
  if (value !== 'local' && value !== 'open' && value !== 'closed') {
    const kind = typeof value === 'string' ? RangeError : TypeError;
    throw new kind(`onStale must be 'local', 'open' or 'closed'; received ${String(value)}`);
  }
  return value;
}
