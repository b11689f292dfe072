/**
 * The status page in a real browser: Debian's chromium, headless, driven by playwright-core.
 * Traffic goes through the proxy; the page must show the hot key at the top, by itself (it
 * polls), and show client-written keys as text, never as markup.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { chromium } from 'playwright-core';
import { createAdminServer, LimitingProxy } from '../../src/proxy/index.js';
import { listen } from '../helpers/http.js';
import { until } from '../helpers/until.js';

const CHROMIUM = '/usr/bin/chromium';

test('the status page shows the hot key, allowed and refused requests, and escapes keys', async () => {
  assert.ok(
    existsSync(CHROMIUM),
    `${CHROMIUM} is missing: install it with 'apt-get install -y chromium' (npm test does, as root)`,
  );
  const upstream = await listen((_req, res) => res.end('ok'));
  const proxy = new LimitingProxy({
    upstream: upstream.url,
    limits: [{ name: 'customers', key: 'header:x-customer', rate: '20/1m' }],
  });
  proxy.server.listen(0, '127.0.0.1');
  await once(proxy.server, 'listening');
  const url = `http://127.0.0.1:${(proxy.server.address() as AddressInfo).port}`;
  const admin = createAdminServer(proxy);
  admin.listen(0, '127.0.0.1');
  await once(admin, 'listening');
  const adminUrl = `http://127.0.0.1:${(admin.address() as AddressInfo).port}`;
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox'],
  });
  try {
    const page = await browser.newPage();
    let alerted = false;
    page.on('dialog', async (dialog) => {
      alerted = true;
      await dialog.dismiss();
    });
    await page.goto(`${adminUrl}/`);
    // Traffic after the page is open: it must update by itself.
    const send = (customer: string) =>
      fetch(url, { headers: { 'x-customer': customer } }).then((r) => r.text());
    for (let i = 0; i < 30; i++) await send('customer-hot');
    for (let i = 0; i < 5; i++) await send(`customer-${i}`);
    await send('<img src=x onerror=alert(1)>');

    // Polled from here, not by page.waitForFunction: that evaluates its predicate as a string in
    // the page, which the page's Content-Security-Policy (no 'unsafe-eval') rightly refuses.
    const firstKey = page.locator('table').first().locator('td.key').first();
    await firstKey.waitFor({ timeout: 10_000 });
    await until(
      async () => (await firstKey.textContent()) === 'x-customer:customer-hot',
      'the hot key at the top',
    );
    const summaryOf = () => page.locator('#summary').textContent();
    // Until the page shows every request: it polls, and a poll can fall between the proxy's
    // counting of the hot key's refusals and of the last requests allowed.
    await until(
      async () => /26 allowed, 10 rate limited/.test((await summaryOf()) ?? ''),
      'every request counted',
    );
    const summary = await summaryOf();
    assert.match(summary ?? '', /26 allowed, 10 rate limited, 0 inflight limited/);
    assert.equal(await page.locator('#chart polyline').count(), 3);
    // The client-written key is text on the page, and no element it describes exists.
    await until(
      async () => (await page.locator('td.key').allTextContents()).some((t) => t.includes('<img')),
      'the client-written key, as text',
    );
    assert.equal(await page.locator('td img').count(), 0);
    assert.equal(alerted, false);
  } finally {
    await browser.close();
    admin.close();
    await proxy.close(0);
    upstream.server.close();
  }
});
