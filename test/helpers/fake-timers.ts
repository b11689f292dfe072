/**
 * A clock and a timer queue that a test moves by hand, installed in place of Date.now,
 * setTimeout and clearTimeout: for a peer that keeps time with timers (@nestjs/throttler's
 * default storage takes each hit back by setTimeout). node:test's mock timers would do, but they
 * print an experimental warning on Node 20 and 22, which the runtime matrix treats as a failure.
 * Timers run in the order of their deadlines (ties in the order they were set), each at its
 * deadline, before the clock reaches the time asked for.
 */
interface Timer {
  at: number;
  order: number;
  run: () => void;
}

export class FakeTimers {
  now: number;
  private readonly timers = new Map<object, Timer>();
  private order = 0;
  private saved: { now: () => number; set: unknown; clear: unknown } | null = null;

  constructor(start: number) {
    this.now = start;
  }

  /** Replaces Date.now, setTimeout and clearTimeout until `uninstall`. */
  install(): void {
    this.saved = { now: Date.now, set: globalThis.setTimeout, clear: globalThis.clearTimeout };
    Date.now = () => this.now;
    const set = (run: () => void, delay = 0) => {
      const id = { fake: this.order };
      this.timers.set(id, { at: this.now + Math.max(1, delay), order: this.order++, run });
      return id;
    };
    const clear = (id: object) => {
      this.timers.delete(id);
    };
    Object.assign(globalThis, { setTimeout: set, clearTimeout: clear });
  }

  uninstall(): void {
    const saved = this.saved;
    if (saved === null) return;
    Date.now = saved.now;
    Object.assign(globalThis, { setTimeout: saved.set, clearTimeout: saved.clear });
    this.saved = null;
  }

  /** Runs every timer due by `time`, in deadline order, then sets the clock to `time`. */
  advanceTo(time: number): void {
    for (;;) {
      let next: [object, Timer] | null = null;
      for (const entry of this.timers) {
        const timer = entry[1];
        if (timer.at > time) continue;
        if (
          next === null ||
          timer.at < next[1].at ||
          (timer.at === next[1].at && timer.order < next[1].order)
        ) {
          next = entry;
        }
      }
      if (next === null) break;
      this.timers.delete(next[0]);
      this.now = next[1].at;
      next[1].run();
    }
    this.now = time;
  }
}
