/**
 * Whether a process's view of Redis is fresh, for whoever reads it (status) and listens (events):
 * 'stale' once when a sync or check fails or is not answered in time, 'sync' once when Redis
 * answers again. One copy for the local-first sketch and the limiters.
 */
import type { EventEmitter } from 'node:events';

export interface SyncStatus {
  /** True while Redis did not answer the last sync (or check): answers are from process memory. */
  stale: boolean;
  /** When Redis last answered (Date.now()), or null before it first did. */
  lastSyncAt: number | null;
  /** The last failure, while stale. */
  error: Error | null;
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

  /** Redis answered: 'sync' if the view was stale. */
  synced(): void {
    const wasStale = this.state.stale;
    this.state = { stale: false, lastSyncAt: Date.now(), error: null };
    if (wasStale) this.emitter.emit('sync');
  }
}

/**
 * `promise`, or a rejection after `timeoutMs` if it has not settled (the work may still finish
 * in Redis: every caller here is safe to repeat or to give up on).
 */
export function withDeadline<T>(promise: Promise<T>, timeoutMs: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`Redis did not answer within ${timeoutMs} ms`)),
      timeoutMs,
    );
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}

export function checkStalePolicy(value: unknown): StalePolicy {
  if (value === undefined) return 'local';
  if (value !== 'local' && value !== 'open' && value !== 'closed') {
    const kind = typeof value === 'string' ? RangeError : TypeError;
    throw new kind(`onStale must be 'local', 'open' or 'closed'; received ${String(value)}`);
  }
  return value;
}
