/**
 * The latencies an operator reads: the status page's, /status's and /metrics' quantiles of the
 * last minute must be within 1% (LATENCY_ACCURACY) of the durations the requests took, in front
 * of the demo upstream's /slow?ms=N, over real sockets and in a real browser.
 *
 * What the proxy measures lies between two things the test knows: the upstream held the request
 * N ms (a timer may fire up to a millisecond early), and the client saw it take its round trip,
 * which holds both of the proxy's durations. So the p-quantile of a group of requests must lie
 * within 1% of [N - 1, the group's longest round trip].
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { chromium } from 'playwright-core';
import {
  createAdminServer,
  createDemoUpstream,
  LATENCY_ACCURACY,
  LimitingProxy,
  type ProxyStatus,
} from '../../src/proxy/index.js';
import { until } from '../helpers/until.js';

async function listening(server: import('node:http').Server): Promise<string> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** [N, requests]: 20 in all, so that p50 (rank 9) falls among the 150s and p90, p99 among the 1200s. */
const GROUPS = [
  [20, 5],
  [150, 10],
  [1200, 5],
] as const;

test('p50, p90, p99 and max of the last minute are within 1% of the durations, on /status, /metrics and the page', async () => {
  const demo = createDemoUpstream();
  const upstreamUrl = await listening(demo);
  const proxy = new LimitingProxy({ upstream: upstreamUrl, limits: [{ inflight: 100 }] });
  const url = await listening(proxy.server);
  const admin = createAdminServer(proxy);
  const adminUrl = await listening(admin);
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox'],
  });
  try {
    // Each group's bounds: [N - 1, its longest round trip as the client saw it].
    const bounds = new Map<number, { low: number; high: number }>();
    await Promise.all(
      GROUPS.flatMap(([ms, requests]) => {
        bounds.set(ms, { low: ms - 1, high: 0 });
        return Array.from({ length: requests }, async () => {
          const started = performance.now();
          const res = await fetch(`${url}/slow?ms=${ms}`);
          await res.text();
          const took = performance.now() - started;
          assert.equal(res.status, 200);
          const group = bounds.get(ms) as { low: number; high: number };
          group.high = Math.max(group.high, took);
        });
      }),
    );
    const within = (what: string, got: number | null, ms: number, slack = 0) => {
      const { low, high } = bounds.get(ms) as { low: number; high: number };
      assert.ok(
        got !== null &&
          got >= low * (1 - LATENCY_ACCURACY) - slack &&
          got <= high * (1 + LATENCY_ACCURACY) + slack,
        `${what} ${got} ms: outside [${low}, ${high.toFixed(2)}] ms by more than 1%`,
      );
    };
    const status = (await (await fetch(`${adminUrl}/status`)).json()) as ProxyStatus;
    for (const kind of ['total', 'upstream'] as const) {
      const latency = status.latencyMs[kind];
      within(`${kind} p50`, latency.p50, 150);
      within(`${kind} p90`, latency.p90, 1200);
      within(`${kind} p99`, latency.p99, 1200);
      within(`${kind} max`, latency.max, 1200);
    }

    const metrics = await (await fetch(`${adminUrl}/metrics`)).text();
    const gauge = (quantile: string) => {
      const line = metrics
        .split('\n')
        .find((l) =>
          l.startsWith(`hotcount_request_duration_last_minute_seconds{quantile="${quantile}"} `),
        );
      return line === undefined ? null : Number(line.split(' ')[1]) * 1000;
    };
    within('/metrics p50', gauge('0.5'), 150, 1e-9);
    within('/metrics p99', gauge('0.99'), 1200, 1e-9);
    within('/metrics max', gauge('1'), 1200, 1e-9);

    // The page shows whole milliseconds at this scale: half of one is its rounding.
    const page = await browser.newPage();
    await page.goto(`${adminUrl}/`);
    for (const [id, kind] of [
      ['#latency', 'total'],
      ['#upstream-latency', 'upstream'],
    ] as const) {
      const card = page.locator(id);
      await until(async () => /max/.test((await card.textContent()) ?? ''), `${kind} on the page`);
      const shown = ((await card.textContent()) ?? '').match(/[\d.]+(?= ms)/g)?.map(Number) ?? [];
      assert.equal(shown.length, 4, `${kind} card: ${await card.textContent()}`);
      within(`page ${kind} p50`, shown[0], 150, 0.5);
      within(`page ${kind} p90`, shown[1], 1200, 0.5);
      within(`page ${kind} p99`, shown[2], 1200, 0.5);
      within(`page ${kind} max`, shown[3], 1200, 0.5);
    }
  } finally {
    await browser.close();
    admin.close();
    await proxy.close(0);
    demo.close();
  }
});
