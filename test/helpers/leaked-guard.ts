/**
 * Run by inflight.test.ts in a child process with --expose-gc: guards dropped without release
 * are collected, and their amounts come back. Prints what it saw as JSON.
 *
 * Under test/, so `node --test` may load it without --expose-gc: it then does nothing.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Inflight } from '../../src/index.js';

const gc = (globalThis as { gc?: () => void }).gc;
if (gc !== undefined) {
  const results = [];
  for (const reclaimLeaked of [true, false]) {
    const inflight = new Inflight({ reclaimLeaked });
    const kept = inflight.acquire('k');
    (() => {
      inflight.acquire('k');
      inflight.acquire('k');
    })();
    const before = inflight.estimate('k');
    for (let i = 0; i < 30 && inflight.leaked < 2; i++) {
      gc();
      await sleep(10);
    }
    results.push({ reclaimLeaked, before, after: inflight.estimate('k'), leaked: inflight.leaked });
    kept.release();
  }
  process.stdout.write(JSON.stringify(results));
}
