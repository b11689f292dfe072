/**
 * ClientWindows against the peers' semantics, written out as @fastify/rate-limit's LocalStore
 * has them (the model below): the same answers, call for call, while the table holds every
 * client; never a request let through that the model refuses, and never a count under the
 * model's (up to max + 1), once clients push each other out of it.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { ClientWindows } from '../../src/limits/client-windows.js';

const secret = new Uint8Array(16).fill(61);

/** LocalStore's algorithm (@fastify/rate-limit 11.2, store/LocalStore.js), over a Map. */
class Model {
  private readonly clients = new Map<number, { current: number; start: number }>();
  constructor(
    private readonly windowMs: number,
    private readonly continueExceeding: boolean,
    private readonly exponentialBackoff: boolean,
  ) {}

  hit(key: number, time: number, max: number): { current: number; ttl: number } {
    const w = this.windowMs;
    let state = this.clients.get(key);
    let ttl: number;
    if (state === undefined || state.start + w <= time) {
      state = { current: 1, start: time };
      ttl = w;
    } else {
      state.current++;
      if (this.continueExceeding && state.current > max) {
        ttl = w;
        state.start = time;
      } else if (this.exponentialBackoff && state.current > max) {
        const backoff = w * 2 ** (state.current - max - 1);
        ttl = Number.isSafeInteger(backoff) ? backoff : Number.MAX_SAFE_INTEGER;
        state.start = time;
      } else {
        ttl = w - (time - state.start);
      }
    }
    this.clients.set(key, state);
    return { current: state.current, ttl };
  }

  read(key: number, time: number): { current: number; ttl: number } {
    const state = this.clients.get(key);
    if (state === undefined || state.start + this.windowMs <= time) return { current: 0, ttl: 0 };
    return { current: state.current, ttl: this.windowMs - (time - state.start) };
  }
}

const steps = fc.array(
  fc.record({
    read: fc.boolean(),
    key: fc.nat(30),
    // Mostly small steps, some of a window or more, so that windows end and start again.
    after: fc.oneof(fc.integer({ min: 0, max: 50 }), fc.integer({ min: 0, max: 3000 })),
  }),
  { maxLength: 150 },
);

const setup = fc.record({
  windowMs: fc.integer({ min: 1, max: 1000 }),
  max: fc.integer({ min: 0, max: 5 }),
  rule: fc.constantFrom('plain', 'continueExceeding', 'exponentialBackoff'),
});

function both(windowMs: number, rule: string, capacity: number) {
  let time = 1_700_000_000_000;
  const continueExceeding = rule === 'continueExceeding';
  const exponentialBackoff = rule === 'exponentialBackoff';
  const windows = new ClientWindows({
    windowMs,
    continueExceeding,
    exponentialBackoff,
    capacity,
    secret,
    width: 256,
    now: () => time,
  });
  const model = new Model(windowMs, continueExceeding, exponentialBackoff);
  /** One step of a script, after its time: hotcount's answer and LocalStore's. */
  const apply = (step: { read: boolean; key: number; after: number }, max: number) => {
    time += step.after;
    const key = String(step.key);
    const ours = step.read ? windows.read(key, max) : windows.hit(key, max);
    const theirs = step.read ? model.read(step.key, time) : model.hit(step.key, time, max);
    return { ours, theirs };
  };
  return { windows, model, apply, advance: (ms: number) => (time += ms), now: () => time };
}

test('while the table holds every client: the same count and ttl as LocalStore, call for call', () => {
  fc.assert(
    fc.property(setup, steps, ({ windowMs, max, rule }, script) => {
      const { apply } = both(windowMs, rule, 1 << 16);
      for (const step of script) {
        const { ours, theirs } = apply(step, max);
        assert.deepEqual(ours, theirs, JSON.stringify(step));
      }
    }),
  );
});

/** Many hits over a few more clients than a table of 8 holds, in steps short against a window. */
const crowded = fc.array(
  fc.record({
    read: fc.boolean(),
    key: fc.nat(11),
    after: fc.oneof(fc.integer({ min: 0, max: 10 }), fc.integer({ min: 0, max: 400 })),
  }),
  { minLength: 100, maxLength: 300 },
);

const crowdedSetup = fc.record({
  windowMs: fc.integer({ min: 200, max: 1000 }),
  max: fc.integer({ min: 0, max: 20 }),
  rule: fc.constantFrom('plain', 'continueExceeding', 'exponentialBackoff'),
});

test('with clients pushing each other out of a table of 8: never a request let through that LocalStore refuses, never a count under its own (up to max + 1)', () => {
  fc.assert(
    fc.property(crowdedSetup, crowded, ({ windowMs, max, rule }, script) => {
      const { apply } = both(windowMs, rule, 8);
      for (const step of script) {
        const { ours, theirs } = apply(step, max);
        const what = `${JSON.stringify(step)}: ours ${JSON.stringify(ours)}, LocalStore ${JSON.stringify(theirs)}`;
        assert.ok(ours.current >= Math.min(theirs.current, max + 1), what);
        if (theirs.current > max) assert.ok(ours.current > max, what);
      }
    }),
    { numRuns: 400 },
  );
});

test('a client pushed out of the table and back counts on through the window LocalStore starts after its own', () => {
  const { windows, model, advance, now } = both(1000, 'plain', 8);
  const step = (key: string, ms: number) => {
    advance(ms);
    return [windows.hit(key, 100).current, model.hit(Number(key.slice(1)), now(), 100).current];
  };
  step('a0', 0);
  for (let i = 1; i <= 8; i++) step(`k${i}`, i === 1 ? 10 : 0); // a0's slot goes to a later client
  assert.deepEqual(step('a0', 890), [2, 2], 'back from the backstop at 900: 2 in its window');
  step('a0', 100); // 1000: LocalStore starts a new window (1), hotcount's runs on from 900
  step('a0', 500);
  const [ours, theirs] = step('a0', 400); // 1900: hotcount's window ends, LocalStore's does not
  assert.equal(theirs, 3);
  assert.ok(ours >= theirs, `${ours} requests counted, LocalStore counts ${theirs}`);
});

test('a client held over the limit by continueExceeding stays held through a trip out of the table', () => {
  const { windows, model, advance, now } = both(1000, 'continueExceeding', 8);
  const step = (key: string, ms: number) => {
    advance(ms);
    return [windows.hit(key, 3).current, model.hit(Number(key.slice(1)), now(), 3).current];
  };
  for (let i = 0; i < 4; i++) step('a0', i === 0 ? 0 : 1); // the 4th is over 3: held
  step('a0', 987); // each request within a window of the last holds it on
  step('a0', 990);
  step('a0', 990);
  for (let i = 1; i <= 8; i++) step(`k${i}`, i === 1 ? 5 : 0); // a0's slot goes to a later client
  const [ours, theirs] = step('a0', 925); // still within a window of its last request
  assert.ok(theirs > 3);
  assert.ok(ours > 3, `refused as with LocalStore (${ours} counted, LocalStore ${theirs})`);
});

test('bad options are named', () => {
  assert.throws(() => new ClientWindows({ windowMs: 0 }), {
    name: 'RangeError',
    message: /windowMs/,
  });
  assert.throws(() => new ClientWindows({ windowMs: '1' as unknown as number }), {
    name: 'TypeError',
    message: /windowMs/,
  });
  assert.throws(() => new ClientWindows({ windowMs: 1000, capacity: 0 }), {
    name: 'RangeError',
    message: /capacity/,
  });
  assert.throws(() => new ClientWindows({ windowMs: 1000, continueExceeding: 1 as never }), {
    name: 'TypeError',
    message: /continueExceeding/,
  });
  assert.throws(() => new ClientWindows({ windowMs: 1000, cache: 10 } as never), {
    name: 'TypeError',
    message: /cache is not an option/,
  });
});
