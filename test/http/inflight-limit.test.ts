import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import express from 'express';
import { inflightLimit } from '../../src/http/index.js';
import { LOOPBACK, listen, problemOf, sendAlone, settles } from '../helpers/http.js';

const secret = new Uint8Array(16).fill(37);
const CLIENT = LOOPBACK;

test('over the limit: 503 with a short Retry-After and problem+json; a held request counts until its response ends', async () => {
  const limit = inflightLimit({ limit: 2, secret, retryAfterS: 2 });
  const waiting: (() => void)[] = [];
  const { server, url } = await listen((req, res) =>
    limit(req, res, () => {
      waiting.push(() => res.end('done'));
    }),
  );
  try {
    const held = [fetch(url), fetch(url)];
    await settles(limit, 2);
    const refused = await fetch(url);
    assert.equal(refused.headers.get('retry-after'), '2');
    await problemOf(refused, 503);
    assert.equal(limit.inflight.estimate(CLIENT), 2, 'a refusal holds nothing');
    for (const finish of waiting) finish();
    for (const response of await Promise.all(held)) assert.equal(await response.text(), 'done');
    await settles(limit, 0);
  } finally {
    server.close();
  }
});

test('the guard is given back exactly once on every path: finished, client aborted, socket closed, handler threw', async () => {
  const limit = inflightLimit({ limit: 10, secret });
  const { server, port } = await listen((req, res) => {
    try {
      limit(req, res, () => {
        if (req.url === '/finish') res.end('ok');
        else if (req.url === '/throw') throw new Error('handler failed');
        else if (req.url === '/destroy') req.socket.destroy();
        // '/hang': never answers; the client gives up
      });
    } catch {
      res.statusCode = 500;
      res.end('caught');
    }
  });
  const send = (path: string) => sendAlone(port, path);
  try {
    assert.equal(await send('/finish'), '200');
    await settles(limit, 0);
    assert.equal(await send('/throw'), '500');
    await settles(limit, 0);
    assert.equal(await send('/destroy'), 'reset');
    await settles(limit, 0);
    assert.equal(await send('/hang'), 'reset');
    await settles(limit, 0);
    // All at once, many times: still back to exactly 0.
    const paths = ['/finish', '/throw', '/destroy', '/hang'];
    await Promise.all(Array.from({ length: 40 }, (_, i) => send(paths[i % 4])));
    await settles(limit, 0);
    assert.equal(limit.inflight.sketch.total, 0);
  } finally {
    server.close();
  }
});

test('Express: a handler error answered by error middleware gives the guard back', async () => {
  const limit = inflightLimit({ limit: 1, secret });
  const app = express();
  app.use(limit);
  app.get('/fail', () => {
    throw new Error('boom');
  });
  app.get('/slow', async (_req, res) => {
    await sleep(20);
    res.send('slow');
  });
  app.use(
    (error: Error, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
      res.status(500).send(`handled ${error.message}`);
    },
  );
  const { server, url } = await listen(app);
  try {
    for (let i = 0; i < 5; i++) {
      const response = await fetch(`${url}/fail`);
      assert.equal(await response.text(), 'handled boom');
      await settles(limit, 0);
    }
    assert.equal((await fetch(`${url}/slow`)).status, 200);
    await settles(limit, 0);
  } finally {
    server.close();
  }
});

test('dryRun counts and calls onLimit but never refuses; skip holds nothing', async () => {
  const seen: number[] = [];
  const limit = inflightLimit({
    limit: 1,
    secret,
    dryRun: true,
    skip: (req) => req.url === '/health',
    onLimit: (_req, decision) => seen.push(decision.count),
  });
  const waiting: (() => void)[] = [];
  const { server, url } = await listen((req, res) =>
    limit(req, res, () => {
      if (req.url === '/health') res.end('ok');
      else waiting.push(() => res.end('done'));
    }),
  );
  try {
    const held = [fetch(url), fetch(url)];
    await settles(limit, 2);
    assert.deepEqual(seen, [2]);
    assert.equal((await fetch(`${url}/health`)).status, 200);
    for (const finish of waiting) finish();
    await Promise.all(held);
    await settles(limit, 0);
  } finally {
    server.close();
  }
});

test('options are validated at construction, with the option named', () => {
  assert.throws(() => inflightLimit({ limit: 0 }), { name: 'RangeError', message: /limit/ });
  assert.throws(() => inflightLimit({} as never), { name: 'TypeError', message: /limit/ });
  assert.throws(() => inflightLimit({ limit: 1, retryAfterS: 0 }), {
    name: 'RangeError',
    message: /retryAfterS/,
  });
  assert.throws(() => inflightLimit({ limit: 1, onLimit: 'x' as never }), {
    name: 'TypeError',
    message: /onLimit/,
  });
  assert.throws(() => inflightLimit({ limit: 1, windowMs: 5 } as never), {
    name: 'TypeError',
    message: /windowMs is not an option/,
  });
});
