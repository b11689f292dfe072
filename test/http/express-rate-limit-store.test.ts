import assert from 'node:assert/strict';
import { test } from 'node:test';
import express from 'express';
import { MemoryStore, rateLimit } from 'express-rate-limit';
import fc from 'fast-check';
import { ExpressRateLimitStore } from '../../src/http/index.js';
import { listen } from '../helpers/http.js';

const secret = new Uint8Array(16).fill(44);

/** An Express app limited by express-rate-limit on `store`; each request's key is its x-client header. */
async function app(store: ExpressRateLimitStore, options: Record<string, unknown> = {}) {
  const server = express();
  const limiter = rateLimit({
    windowMs: 60_000,
    limit: 3,
    standardHeaders: 'draft-8',
    legacyHeaders: false,
    keyGenerator: (req) => String(req.headers['x-client']),
    store,
    ...options,
  });
  server.use(limiter);
  server.get('/', (_req, res) => {
    res.send('ok');
  });
  server.get('/fails', (_req, res) => {
    res.status(500).send('no');
  });
  const listening = await listen(server);
  const hit = (client: string, path = '/') =>
    fetch(`${listening.url}${path}`, { headers: { 'x-client': client } });
  return { ...listening, limiter, hit };
}

test('express-rate-limit with ExpressRateLimitStore limits as with its own store, its headers included', async () => {
  const { server, hit } = await app(new ExpressRateLimitStore({ secret }));
  try {
    for (let i = 0; i < 3; i++) {
      const response = await hit('a');
      assert.equal(response.status, 200);
      const field = response.headers.get('ratelimit') ?? '';
      assert.match(field, new RegExp(`r=${2 - i}; t=\\d+`));
      const t = Number(/t=(\d+)/.exec(field)?.[1]);
      assert.ok(t >= 1 && t <= 60, `t=${t}`);
    }
    assert.equal((await hit('a')).status, 429);
    assert.equal((await hit('b')).status, 200);
  } finally {
    server.close();
  }
});

test('resetKey lets one client start over and leaves the others where they were', async () => {
  const { server, hit, limiter } = await app(new ExpressRateLimitStore({ secret }));
  try {
    for (let i = 0; i < 3; i++) await hit('a');
    for (let i = 0; i < 3; i++) await hit('b');
    assert.equal((await hit('a')).status, 429);
    await limiter.resetKey('a');
    for (let i = 0; i < 3; i++) assert.equal((await hit('a')).status, 200);
    assert.equal((await hit('a')).status, 429);
    assert.equal((await hit('b')).status, 429);
  } finally {
    server.close();
  }
});

test('skipFailedRequests: a failed request is taken back through decrement', async () => {
  const { server, hit } = await app(new ExpressRateLimitStore({ secret }), {
    skipFailedRequests: true,
  });
  try {
    for (let i = 0; i < 5; i++) assert.equal((await hit('a', '/fails')).status, 500);
    for (let i = 0; i < 3; i++) assert.equal((await hit('a')).status, 200);
    assert.equal((await hit('a')).status, 429);
  } finally {
    server.close();
  }
});

test("windows: 'aligned': counts start over when the window of the clock turns; resetTime is its end", () => {
  let now = 120_500;
  const store = new ExpressRateLimitStore({ secret, windows: 'aligned', now: () => now });
  store.init({ windowMs: 1000 });
  assert.deepEqual(store.increment('a'), { totalHits: 1, resetTime: new Date(121_000) });
  assert.equal(store.increment('a').totalHits, 2);
  store.resetKey('a');
  assert.equal(store.get('a')?.totalHits, 0);
  now = 121_000;
  assert.deepEqual(store.increment('a'), { totalHits: 1, resetTime: new Date(122_000) });
  store.resetAll();
  assert.equal(store.get('a')?.totalHits, 0);
});

test("windows: 'aligned', property: resetKey and decrement never make any key count less than it should, with evictions", () => {
  const op = fc.record({
    kind: fc.constantFrom('increment', 'increment', 'increment', 'decrement', 'resetKey', 'tick'),
    key: fc.integer({ min: 0, max: 15 }),
  });
  fc.assert(
    fc.property(
      fc.array(op, { maxLength: 300 }),
      fc.integer({ min: 0, max: 4 }),
      fc.boolean(),
      (ops, maxAdjusted, conservative) => {
        let now = 0;
        const store = new ExpressRateLimitStore({
          secret,
          windows: 'aligned',
          width: 4,
          depth: 2,
          maxAdjusted,
          conservative,
          now: () => now,
        });
        store.init({ windowMs: 100 });
        // What each key should count in the current window: hits since the window began or
        // since its reset, less its decrements since then.
        let owed = new Map<string, number>();
        for (const { kind, key } of ops) {
          const k = `client-${key}`;
          if (kind === 'tick') {
            now += 37;
            if (Math.floor(now / 100) !== Math.floor((now - 37) / 100)) owed = new Map();
            continue;
          }
          if (kind === 'increment') {
            owed.set(k, (owed.get(k) ?? 0) + 1);
            const { totalHits } = store.increment(k);
            assert.ok(totalHits >= (owed.get(k) ?? 0), `${k}: ${totalHits} < ${owed.get(k)}`);
          } else if (kind === 'decrement') {
            owed.set(k, (owed.get(k) ?? 0) - 1);
            store.decrement(k);
          } else {
            owed.set(k, 0);
            store.resetKey(k);
          }
          for (let other = 0; other < 16; other++) {
            const o = `client-${other}`;
            const totalHits = store.get(o)?.totalHits ?? 0;
            assert.ok(totalHits >= 0);
            assert.ok(totalHits >= (owed.get(o) ?? 0), `${o}: ${totalHits} < ${owed.get(o)}`);
          }
        }
      },
    ),
    { numRuns: 300 },
  );
});

test('bad options are refused, naming the option; no window before init', () => {
  assert.throws(() => new ExpressRateLimitStore({ widht: 10 } as never), {
    name: 'TypeError',
    message: /widht is not an option/,
  });
  assert.throws(() => new ExpressRateLimitStore({ maxAdjusted: -1 }), {
    name: 'RangeError',
    message: /maxAdjusted/,
  });
  assert.throws(() => new ExpressRateLimitStore({ shared: true } as never), {
    name: 'TypeError',
    message: /shared/,
  });
  assert.throws(() => new ExpressRateLimitStore({ windows: 'sliding' as never }), {
    name: 'RangeError',
    message: /windows/,
  });
  for (const capacity of [0, 1.5, 2 ** 24 + 1]) {
    assert.throws(() => new ExpressRateLimitStore({ capacity }), {
      name: 'RangeError',
      message: /capacity/,
    });
  }
  const store = new ExpressRateLimitStore();
  assert.throws(() => store.increment('a'), { name: 'TypeError', message: /init/ });
  assert.throws(() => store.init({ windowMs: 0 }), { name: 'RangeError', message: /windowMs/ });
});

/**
 * express-rate-limit 8.7's MemoryStore (source/memory-store.ts), over a Map: the model. Its timer
 * that drops the clients idle for a window is left out (a dropped client and an ended one answer
 * alike but for a decrement after the end; see the test against the real MemoryStore below).
 */
class MemoryStoreModel {
  private readonly clients = new Map<string, { totalHits: number; resetTime: number }>();
  constructor(
    private readonly windowMs: number,
    private readonly now: () => number,
  ) {}

  private client(key: string) {
    let client = this.clients.get(key);
    if (client === undefined) {
      client = { totalHits: 0, resetTime: this.now() + this.windowMs };
      this.clients.set(key, client);
    }
    return client;
  }

  increment(key: string) {
    const client = this.client(key);
    if (client.resetTime <= this.now()) {
      client.totalHits = 0;
      client.resetTime = this.now() + this.windowMs;
    }
    client.totalHits++;
    return { totalHits: client.totalHits, resetTime: new Date(client.resetTime) };
  }

  decrement(key: string) {
    const client = this.client(key);
    if (client.totalHits > 0) client.totalHits--;
  }

  resetKey(key: string) {
    this.clients.delete(key);
  }

  /** A client whose window is running, or undefined for none (since 8.7: none once it ended). */
  get(key: string) {
    const client = this.clients.get(key);
    if (client === undefined || client.resetTime <= this.now()) return undefined;
    return { totalHits: client.totalHits, resetTime: new Date(client.resetTime) };
  }
}

const memoryOps = fc.array(
  fc.record({
    kind: fc.constantFrom('increment', 'increment', 'increment', 'decrement', 'resetKey', 'get'),
    key: fc.nat(11),
    after: fc.oneof(fc.integer({ min: 0, max: 10 }), fc.integer({ min: 0, max: 300 })),
  }),
  { minLength: 50, maxLength: 250 },
);

for (const capacity of [1 << 16, 8]) {
  const crowded = capacity === 8;
  test(
    crowded
      ? "per-client windows with clients pushing each other out of a table of 8: a count never under MemoryStore's"
      : 'per-client windows (the default): the same totalHits and resetTime as MemoryStore, call for call',
    () => {
      fc.assert(
        fc.property(fc.integer({ min: 100, max: 1000 }), memoryOps, (windowMs, ops) => {
          let now = 1_700_000_000_000;
          const clock = () => now;
          const store = new ExpressRateLimitStore({ secret, capacity, width: 256, now: clock });
          store.init({ windowMs });
          const model = new MemoryStoreModel(windowMs, clock);
          for (const { kind, key, after } of ops) {
            now += after;
            const k = `client-${key}`;
            if (kind === 'increment') {
              const ours = store.increment(k);
              const theirs = model.increment(k);
              if (crowded) assert.ok(ours.totalHits >= theirs.totalHits, `${k} at ${now}`);
              else assert.deepEqual(ours, theirs, `${k} at ${now}`);
            } else if (kind === 'decrement') {
              store.decrement(k);
              model.decrement(k);
            } else if (kind === 'resetKey') {
              store.resetKey(k);
              model.resetKey(k);
            } else {
              const theirs = model.get(k);
              const ours = store.get(k);
              if (crowded) {
                assert.ok((ours?.totalHits ?? 0) >= (theirs?.totalHits ?? 0), `${k} at ${now}`);
              } else {
                assert.deepEqual(ours, theirs, `${k} at ${now}`);
              }
            }
          }
        }),
        { numRuns: crowded ? 300 : 100 },
      );
    },
  );
}

/**
 * This store in a table of 8 and MemoryStore's model, on one clock that the test moves
 * (`advance`), for the shrunk cases of the crowded property; `both` applies one call to each.
 */
function crowdedPair(windowMs: number) {
  const clock = { now: 1_700_000_000_000 };
  const now = () => clock.now;
  const store = new ExpressRateLimitStore({ secret, capacity: 8, width: 256, now });
  store.init({ windowMs });
  const model = new MemoryStoreModel(windowMs, now);
  const both = (call: 'increment' | 'decrement' | 'resetKey', key: string) => {
    const ours = store[call](key);
    const theirs = model[call](key);
    return [ours?.totalHits ?? 0, theirs?.totalHits ?? 0];
  };
  const advance = (ms: number) => {
    clock.now += ms;
  };
  return { store, model, both, advance };
}

test("a window a decrement opened, pushed out of the table before its first hit, is not restarted later than MemoryStore's", () => {
  // Found by the property above in a CI run (fast-check's seed 1540455580), shrunk, then fixed.
  const { both, advance } = crowdedPair(100);
  for (const key of [6, 2, 1, 3, 8, 4, 5, 0]) both('increment', `client-${key}`); // a full bucket
  both('decrement', 'client-7'); // a slot of its own: MemoryStore opens a window of 0 here
  advance(1);
  both('increment', 'client-9'); // client-7's slot goes to client-9
  both('increment', 'client-7');
  advance(99);
  both('increment', 'client-7'); // MemoryStore's window of 0 ended: a new one, from here
  advance(1);
  const [ours, theirs] = both('increment', 'client-7');
  assert.equal(theirs, 2);
  assert.ok(ours >= theirs, `${ours} counted, MemoryStore ${theirs}`);
});

test("get, after an uncertain window ended (a decrement in doubt), answers no less than MemoryStore's running one", () => {
  // Found by the crowded property above (fast-check's seed 166962309), shrunk by hand.
  const { store, model, both, advance } = crowdedPair(684);
  both('resetKey', 'client-0');
  both('increment', 'client-1'); // takes the forgotten slot: the bucket has lost a client
  both('decrement', 'client-7'); // in doubt: MemoryStore opens a window of 0 here
  for (const after of [1, 683]) {
    advance(after);
    both('increment', 'client-7');
  }
  advance(1); // this store's window (from the first hit) ends; MemoryStore's second one runs
  const theirs = model.get('client-7')?.totalHits ?? 0;
  assert.equal(theirs, 1);
  assert.ok((store.get('client-7')?.totalHits ?? 0) >= theirs);
});

test("get answers as the installed express-rate-limit's MemoryStore: the running window, nothing once it ended", async (t) => {
  // The real MemoryStore reads the real clock (node:test's mock timers would do, but they are
  // experimental on Node 20 and 22, and warn), so the windows are chosen for any machine's
  // pace: one of a minute runs through the first reads, one of 20 ms has surely ended 100 ms
  // after its hit.
  const pairOf = (windowMs: number) => {
    const theirs = new MemoryStore();
    theirs.init({ windowMs } as Parameters<MemoryStore['init']>[0]);
    t.after(() => theirs.shutdown());
    const ours = new ExpressRateLimitStore({ secret });
    ours.init({ windowMs });
    return { ours, theirs };
  };
  const plain = (info: { totalHits: number; resetTime?: Date } | undefined) =>
    info && { totalHits: info.totalHits, running: (info.resetTime?.getTime() ?? 0) > Date.now() };
  const same = async ({ ours, theirs }: ReturnType<typeof pairOf>, what: string) => {
    assert.deepEqual(plain(ours.get('a')), plain(await theirs.get('a')), what);
  };
  const minute = pairOf(60_000);
  await same(minute, 'a client never seen');
  minute.ours.increment('a');
  await minute.theirs.increment('a');
  await same(minute, 'a running window');
  assert.equal(minute.ours.get('a')?.totalHits, 1);

  const short = pairOf(20);
  short.ours.increment('a');
  await short.theirs.increment('a');
  await new Promise((resolve) => setTimeout(resolve, 100));
  await same(short, 'the window ended');
  assert.equal(short.ours.get('a'), undefined);
});

// express-rate-limit 8.6's own MemoryStore tests (test/library/memory-store-test.ts), reproduced
// for this store. Left out, because they read MemoryStore's internals: the timer tests (shutdown
// clears `store.interval`, init clears the previous one, the Electron setInterval case), the move
// of clients from `store.previous` to `store.current`, and one Client object for two keys. And
// "resetKey should remove the key from storage" calls increment before init, which this store
// refuses (express-rate-limit always calls init first): it is reproduced after an init.
test("express-rate-limit's MemoryStore cases, reproduced with this store", () => {
  let now = 1_700_000_000_000;
  const fresh = (windowMs = 60_000) => {
    const store = new ExpressRateLimitStore({ now: () => now });
    store.init({ windowMs });
    return store;
  };
  let store = fresh();
  store.increment('test-store');
  const response = store.get('test-store');
  assert.equal(response?.totalHits, 1, 'returns the current hit count and reset time for a key');
  assert.ok(response?.resetTime instanceof Date);

  assert.equal(fresh().increment('k').totalHits, 1, 'sets the value to 1 on first call');

  store = fresh();
  store.increment('k');
  assert.equal(store.increment('k').totalHits, 2, 'increments the key');

  store = fresh();
  store.increment('k');
  store.increment('k');
  store.decrement('k');
  assert.equal(store.increment('k').totalHits, 2, 'decrements the key');

  store = fresh();
  store.increment('k');
  store.decrement('k');
  store.decrement('k');
  assert.equal(store.get('k')?.totalHits, 0, 'does not decrement the key below 0');

  store = fresh();
  store.increment('test-key');
  assert.notEqual(store.get('test-key'), undefined);
  store.resetKey('test-key');
  assert.equal(store.get('test-key'), undefined, 'resetKey removes the key');

  store = fresh();
  store.increment('k');
  store.resetKey('k');
  assert.equal(store.increment('k').totalHits, 1, 'resets the count for a key');

  store = fresh();
  store.increment('one');
  store.increment('two');
  store.resetAll();
  assert.equal(store.increment('one').totalHits, 1, 'resets the count for all keys');
  assert.equal(store.increment('two').totalHits, 1);

  store = fresh(50);
  store.increment('one');
  store.increment('two');
  now += 60;
  assert.equal(store.increment('one').totalHits, 1, 'resets the counts when the window ends');
  assert.equal(store.increment('two').totalHits, 1);
});

// express-rate-limit 8.6's middleware and header tests whose answers depend on the store
// (test/library/middleware-test.ts, headers-test.ts), reproduced with this store: with windows
// aligned to the clock they failed (a first request's reset was the time to the clock's window
// end, not the window); with each client's own window they hold. The store's clock stands in
// for Jest's fake timers.
test("express-rate-limit's store-dependent middleware and header cases, reproduced with this store", async () => {
  // The store's clock: still for the first cases, whose windows pass only when the test moves
  // it (on the real clock, a loaded machine could end a window between two requests); real
  // again for the header cases, where the middleware reads the real clock beside it.
  const base = Date.now();
  let offset = 0;
  let still = true;
  const now = () => (still ? base + offset : Date.now());
  const serve = async (limiters: ReturnType<typeof rateLimit>[]) => {
    const server = express();
    for (const limiter of limiters) server.use(limiter);
    server.get('/', (_req, res) => {
      res.send('Hi there!');
    });
    return listen(server);
  };
  const store = () => new ExpressRateLimitStore({ now });

  // "should (eventually) accept new connections from a blocked IP", "should work repeatedly"
  let served = await serve([rateLimit({ limit: 2, windowMs: 50, store: store() })]);
  try {
    const statuses: number[] = [];
    for (const advance of [0, 0, 0, 60, 0, 0, 60]) {
      offset += advance;
      statuses.push((await fetch(`${served.url}/`)).status);
    }
    assert.deepEqual(statuses, [200, 200, 429, 200, 200, 429, 200]);
  } finally {
    served.server.close();
  }

  // "should send correct `x-ratelimit-limit`, `x-ratelimit-remaining`, and `x-ratelimit-reset`
  // headers"; the middleware reads the real clock for the fields, so the store's is real again.
  still = false;
  served = await serve([
    rateLimit({ windowMs: 60_000, limit: 5, legacyHeaders: true, store: store() }),
  ]);
  try {
    const expected = Math.ceil((Date.now() + 60_000) / 1000);
    const response = await fetch(`${served.url}/`);
    assert.equal(response.headers.get('x-ratelimit-limit'), '5');
    assert.equal(response.headers.get('x-ratelimit-remaining'), '4');
    const reset = Number(response.headers.get('x-ratelimit-reset'));
    assert.ok(reset >= expected - 1 && reset <= expected + 1, `${reset} against ${expected}`);
  } finally {
    served.server.close();
  }

  // "should send correct `ratelimit-*` headers for the standard headers draft 6" and draft 7
  served = await serve([
    rateLimit({ windowMs: 60_000, limit: 5, standardHeaders: true, store: store() }),
  ]);
  try {
    const response = await fetch(`${served.url}/`);
    assert.equal(response.headers.get('ratelimit-policy'), '5;w=60');
    assert.equal(response.headers.get('ratelimit-remaining'), '4');
    assert.equal(response.headers.get('ratelimit-reset'), '60');
  } finally {
    served.server.close();
  }
  served = await serve([
    rateLimit({ windowMs: 60_000, limit: 5, standardHeaders: 'draft-7', store: store() }),
  ]);
  try {
    const response = await fetch(`${served.url}/`);
    assert.equal(response.headers.get('ratelimit'), 'limit=5, remaining=4, reset=60');
  } finally {
    served.server.close();
  }

  // "should send multiple headers correctly for the standard draft 8"
  const windows = [5_000, 60_000, 3_600_000, 86_400_000, 172_800_000];
  served = await serve(
    windows.map((windowMs, i) =>
      rateLimit({
        windowMs,
        limit: [1, 5, 6, 7, 8][i],
        standardHeaders: 'draft-8',
        keyGenerator: () => 'foo',
        store: store(),
      }),
    ),
  );
  try {
    const response = await fetch(`${served.url}/`);
    assert.equal(
      response.headers.get('ratelimit'),
      [
        '"1-in-5sec"; r=0; t=5',
        '"5-in-1min"; r=4; t=60',
        '"6-in-1hr"; r=5; t=3600',
        '"7-in-1day"; r=6; t=86400',
        '"8-in-2days"; r=7; t=172800',
      ].join(', '),
    );
  } finally {
    served.server.close();
  }
});
