/**
 * SketchThrottlerStorage against @nestjs/throttler's own ThrottlerStorageService, call for call,
 * on a clock and timers the test moves (the default storage takes each hit back by setTimeout):
 * the same records while its clients are certain and their hits fall on its sub-windows, and
 * never a request let through that the default refuses, whatever the traffic, collisions and
 * evictions.
 */
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { test } from 'node:test';
import { ThrottlerStorageService } from '@nestjs/throttler';
import fc from 'fast-check';
import { SketchThrottlerStorage } from '../../src/nest/index.js';
import { FakeTimers } from '../helpers/fake-timers.js';

const secret = new Uint8Array(16).fill(83);
/** A start on every grid the tests use (a multiple of 8 s), far from 0 as Date.now is. */
const EPOCH = 1_800_000_000_000;
/** @nestjs/throttler 6.7 and later: blockDuration 0 limits without a block. */
const NO_BLOCK_MODE = 'incrementWithoutBlock' in ThrottlerStorageService.prototype;
const VERSION: string = createRequire(import.meta.url)('@nestjs/throttler/package.json').version;
/**
 * Before 6.6.0, the default storage kept its hit timers per throttler name, not per key: the end
 * of one key's block cancelled the timers of every key of that throttler, whose hits then never
 * expired; it is not the algorithm to compare with (6.0.0 also rounded its seconds down).
 */
const MODEL = Number(VERSION.split('.')[0]) > 6 || Number(VERSION.split('.')[1]) >= 6;
const skip = MODEL
  ? false
  : `@nestjs/throttler ${VERSION}'s default storage cancels every key's timers at one key's unblock (fixed in 6.6.0)`;

interface Throttler {
  name: string;
  ttl: number;
  limit: number;
  blockDuration: number;
}

interface Request {
  /** Milliseconds since the previous request. */
  after: number;
  client: number;
}

/**
 * Sends `requests` through both storages as the guard does (each throttler in turn, a key per
 * throttler and client) and hands each pair of records to `check`.
 */
async function replay(
  throttlers: Throttler[],
  requests: Request[],
  sketch: SketchThrottlerStorage,
  check: (
    ours: Record<string, unknown>,
    theirs: Record<string, unknown>,
    where: string,
    blockDuration: number,
  ) => void,
): Promise<void> {
  const timers = new FakeTimers(EPOCH);
  timers.install();
  const theirs = new ThrottlerStorageService();
  try {
    let time = EPOCH;
    for (const [index, request] of requests.entries()) {
      time += request.after;
      timers.advanceTo(time);
      for (const { name, ttl, limit, blockDuration } of throttlers) {
        const key = `${name}-client-${request.client}`;
        const expected = await theirs.increment(key, ttl, limit, blockDuration, name);
        const actual = await sketch.increment(key, ttl, limit, blockDuration, name);
        check(
          actual as unknown as Record<string, unknown>,
          expected as unknown as Record<string, unknown>,
          `request ${index} (client ${request.client}, +${time - EPOCH} ms), throttler ${name}`,
          blockDuration,
        );
      }
    }
  } finally {
    theirs.onApplicationShutdown();
    timers.uninstall();
  }
}

test('answers as ThrottlerStorageService while hits fall on its sub-windows (ttl / 4)', {
  skip,
}, async () => {
  const throttler = (name: string, unit: number) =>
    fc.record({
      name: fc.constant(name),
      ttl: fc.constant(4 * unit),
      limit: fc.integer({ min: 0, max: 5 }),
      // Shorter than ttl, as long, longer: the start-over after a block differs in each.
      blockDuration: fc.integer({ min: 0, max: 12 }).map((units) => units * unit),
    });
  const scenario = fc.constantFrom(250, 1000).chain((unit) =>
    fc.record({
      unit: fc.constant(unit),
      throttlers: fc.oneof(
        fc.tuple(throttler('default', unit)),
        fc.tuple(throttler('default', unit), throttler('burst', unit)),
      ),
      requests: fc.array(
        fc.record({
          after: fc.oneof(fc.integer({ min: 0, max: 3 }), fc.integer({ min: 0, max: 20 })),
          client: fc.nat(5),
        }),
        { maxLength: 120 },
      ),
    }),
  );
  await fc.assert(
    fc.asyncProperty(scenario, async ({ unit, throttlers, requests }) => {
      const onGrid = requests.map((request) => ({ ...request, after: request.after * unit }));
      if (!NO_BLOCK_MODE) {
        // Before 6.7 the guard never passes a blockDuration of 0 (it takes ttl instead), and the
        // default storage then blocks for 0 ms; this storage follows 6.7's limit without a block.
        for (const each of throttlers as Throttler[]) each.blockDuration ||= unit;
      }
      const sketch = new SketchThrottlerStorage({ secret, now: () => Date.now() });
      await replay(throttlers, onGrid, sketch, (ours, theirs, where) => {
        assert.deepEqual(ours, theirs, where);
      });
    }),
    { numRuns: 300 },
  );
});

test('never lets through a request ThrottlerStorageService refuses, nor ends its block sooner', {
  skip,
}, async () => {
  const throttler = (name: string) =>
    fc.record({
      name: fc.constant(name),
      ttl: fc.integer({ min: 1, max: 5000 }),
      limit: fc.integer({ min: 0, max: 6 }),
      blockDuration: fc.integer({ min: 0, max: 8000 }),
    });
  const scenario = fc.record({
    throttlers: fc.oneof(fc.tuple(throttler('default')), fc.tuple(throttler('a'), throttler('b'))),
    // Small sketches and tables: collisions in every row, clients pushed out of the table.
    width: fc.integer({ min: 1, max: 64 }),
    depth: fc.integer({ min: 1, max: 3 }),
    capacity: fc.integer({ min: 1, max: 24 }),
    requests: fc.array(
      fc.record({
        after: fc.oneof(fc.integer({ min: 0, max: 50 }), fc.integer({ min: 0, max: 4000 })),
        client: fc.nat(40),
      }),
      { maxLength: 200 },
    ),
  });
  await fc.assert(
    fc.asyncProperty(scenario, async ({ throttlers, width, depth, capacity, requests }) => {
      const sketch = new SketchThrottlerStorage({
        secret,
        width,
        depth,
        capacity,
        now: () => Date.now(),
      });
      await replay(throttlers, requests, sketch, (ours, theirs, where, blockDuration) => {
        if (theirs.isBlocked !== true) return;
        assert.equal(ours.isBlocked, true, `${where}: refused by the default, let through here`);
        // Without a block (blockDuration 0) timeToBlockExpire is a hint (when the oldest hit
        // leaves the window, else when the window ends), which collisions can move either way.
        if (blockDuration === 0) return;
        assert.ok(
          (ours.timeToBlockExpire as number) >= (theirs.timeToBlockExpire as number),
          `${where}: block ends in ${ours.timeToBlockExpire} s here, ${theirs.timeToBlockExpire} s with the default`,
        );
      });
    }),
    { numRuns: 300 },
  );
});
