import assert from 'node:assert/strict';
import { test } from 'node:test';
import express from 'express';
import { rateLimit } from '../../src/http/index.js';
import { listen, problemOf } from '../helpers/http.js';

const secret = new Uint8Array(16).fill(31);

test('node:http: 429 over the limit, with Retry-After, problem+json, and the draft fields on every response', async () => {
  const limit = rateLimit({ limit: 3, windowMs: 60_000, name: 'api', secret });
  const { server, url } = await listen((req, res) => limit(req, res, () => res.end('ok')));
  try {
    for (let i = 0; i < 3; i++) {
      const response = await fetch(url);
      assert.equal(response.status, 200);
      assert.equal(await response.text(), 'ok');
      assert.equal(response.headers.get('ratelimit-policy'), '"api";q=3;w=60');
      // t: until the quota is back, the end of the next window (61 to 120 s from now).
      const fields = /^"api";r=(\d+);t=(\d+)$/.exec(response.headers.get('ratelimit') ?? '');
      assert.equal(Number(fields?.[1]), 2 - i);
      assert.ok(Number(fields?.[2]) > 60 && Number(fields?.[2]) <= 120);
    }
    const refused = await fetch(url);
    const retryAfter = Number(refused.headers.get('retry-after'));
    assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1);
    const problem = await problemOf(refused, 429);
    assert.equal(problem.title, 'Too Many Requests');
    assert.equal(typeof problem.type, 'string');
    assert.match(String(problem.detail), /"api"/);
    assert.match(refused.headers.get('ratelimit') ?? '', /^"api";r=0;t=\d+$/);
  } finally {
    server.close();
  }
});

test('Express: two limiters on one route append their fields; the tighter refuses', async () => {
  const app = express();
  app.use(rateLimit({ limit: 5, windowMs: 1000, name: 'burst', secret }));
  app.use(rateLimit({ limit: 2, windowMs: 60_000, name: 'minute', secret, algorithm: 'gcra' }));
  app.get('/', (_req, res) => {
    res.send('ok');
  });
  const { server, url } = await listen(app);
  try {
    const first = await fetch(url);
    assert.equal(first.status, 200);
    assert.equal(first.headers.get('ratelimit-policy'), '"burst";q=5;w=1, "minute";q=2;w=60');
    assert.match(first.headers.get('ratelimit') ?? '', /^"burst";r=4;t=\d+, "minute";r=1;t=\d+$/);
    assert.equal((await fetch(url)).status, 200);
    const third = await fetch(url);
    assert.equal(third.status, 429);
    assert.match(((await third.json()) as { detail: string }).detail, /"minute"/);
  } finally {
    server.close();
  }
});

test('skip bypasses, dryRun never refuses but counts and calls onLimit', async () => {
  const limited: string[] = [];
  const limit = rateLimit({
    limit: 1,
    windowMs: 60_000,
    secret,
    dryRun: true,
    skip: (req) => req.url === '/health',
    onLimit: (req, decision) => limited.push(`${req.url} ${decision.allowed}`),
  });
  const { server, url } = await listen((req, res) => limit(req, res, () => res.end('ok')));
  try {
    for (let i = 0; i < 3; i++) assert.equal((await fetch(`${url}/health`)).status, 200);
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await fetch(`${url}/a`)).status);
    assert.deepEqual(statuses, [200, 200, 200]);
    assert.deepEqual(limited, ['/a false', '/a false']);
    const skipped = await fetch(`${url}/health`);
    assert.equal(skipped.headers.get('ratelimit'), null);
  } finally {
    server.close();
  }
});

test('a key function that throws: 500 through the error path, never a pass, never a crash', async () => {
  const limit = rateLimit({
    limit: 100,
    windowMs: 1000,
    secret,
    key: () => {
      throw new Error('no customer header');
    },
  });
  let handled = 0;
  const { server, url } = await listen((req, res) =>
    limit(req, res, () => {
      handled++;
      res.end('ok');
    }),
  );
  const app = express();
  app.use(limit);
  app.get('/', (_req, res) => {
    handled++;
    res.send('ok');
  });
  app.use(
    (error: Error, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
      res.status(500).send(`express saw: ${error.message}`);
    },
  );
  const viaExpress = await listen(app);
  try {
    const plain = await fetch(url);
    assert.equal(plain.status, 500);
    assert.match(((await plain.json()) as { detail: string }).detail, /no customer header/);
    const framed = await fetch(viaExpress.url);
    assert.equal(framed.status, 500);
    assert.equal(await framed.text(), 'express saw: no customer header');
    assert.equal(handled, 0);
  } finally {
    server.close();
    viaExpress.server.close();
  }
});

test('options are validated at construction, with the option named', () => {
  assert.throws(() => rateLimit({ limit: 0, windowMs: 1000 }), {
    name: 'RangeError',
    message: /limit/,
  });
  assert.throws(() => rateLimit({ limit: 1, windowMs: 1000, name: 'a"b' }), {
    name: 'RangeError',
    message: /name/,
  });
  assert.throws(() => rateLimit({ limit: 1, windowMs: 1000, skip: 3 as never }), {
    name: 'TypeError',
    message: /skip/,
  });
  assert.throws(() => rateLimit({ limit: 1, windowMs: 1000, dryRun: 'yes' as never }), {
    name: 'TypeError',
    message: /dryRun/,
  });
  assert.throws(() => rateLimit({ limit: 1, windowMs: 1000, limits: 3 } as never), {
    name: 'TypeError',
    message: /limits is not an option/,
  });
  assert.throws(() => rateLimit({ limit: 1, windowMs: 1000, key: 'cookie' as never }), {
    name: 'TypeError',
    message: /key/,
  });
});
