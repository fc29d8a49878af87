/**
 * The offline Alipay gateway's authorisation page (第三方应用授权) in a real browser (Debian's
 * Chromium through playwright-core): the merchant opens the URL durapay's adapter builds, presses
 * Authorise or Cancel, and the browser lands on the app's redirect URI, another origin, which the
 * page's Content-Security-Policy must let the form's redirect reach. No stack: the gateway's
 * router and the app's page, each on a port of its own.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import {
  alipaySettings,
  createAlipaySandbox,
  generateAlipaySandboxKeys,
  type AlipaySandbox,
} from '../../sandbox/alipay';
import { AlipayChannel } from '../../src/channels/alipay';
import { loadConfig } from '../../src/config';
import { launchBrowser, type TestBrowser } from '../support/browser';

jest.setTimeout(120_000);

let browser: TestBrowser;
let sandbox: AlipaySandbox;
let channel: AlipayChannel;
const servers: http.Server[] = [];
let merchantOrigin = '';

async function listen(app: express.Express): Promise<string> {
  const server = http.createServer(app);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

beforeAll(async () => {
  browser = await launchBrowser();
  const keys = generateAlipaySandboxKeys();
  const gateway = express();
  const origin = await listen(gateway);
  sandbox = createAlipaySandbox({ keys, publicBaseUrl: `${origin}/alipay`, timeScale: 1 });
  gateway.use('/alipay', sandbox.router);
  channel = new AlipayChannel({
    ...loadConfig(alipaySettings(keys, `${origin}/alipay`)).alipay!,
    timeoutMs: 5_000,
  });
  const merchant = express();
  merchant.get('/back', (_req, res) => {
    res.type('html').send('<!doctype html><title>back</title><p id="landed">Back at the app</p>');
  });
  // Another port is another origin: the page's form must be let through to it.
  merchantOrigin = await listen(merchant);
});

afterAll(async () => {
  await browser?.close();
  sandbox?.close();
  for (const server of servers) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

describe('the authorisation page in a browser', () => {
  test('when the merchant presses Authorise, then the browser lands on the redirect URI with a code that the adapter exchanges', async () => {
    const back = await browser.run(async (page) => {
      await page.goto(
        channel.accounts.authorization.pageUrl({ redirectUri: `${merchantOrigin}/back`, state: 's-1' }),
      );
      await page.getByText('to act for your shop').waitFor();
      await page.locator('#authorize').click();
      await page.waitForURL(`${merchantOrigin}/back?**`);
      await page.locator('#landed').waitFor();
      return new URL(page.url());
    });
    expect(back.searchParams.get('state')).toBe('s-1');
    const token = await channel.accounts.authorization.exchange(back.searchParams.get('app_auth_code')!);
    expect(token.userId).toMatch(/^2088\d{12}$/);
    expect(sandbox.appAuth(token.appAuthToken)).toMatchObject({ userId: token.userId, refreshed: false });
  });

  test('when the merchant picks its shop again and presses Authorise, then the token is that shop’s', async () => {
    const earlier = sandbox.mintAppAuthToken();
    const back = await browser.run(async (page) => {
      await page.goto(
        channel.accounts.authorization.pageUrl({ redirectUri: `${merchantOrigin}/back`, state: 's-2' }),
      );
      await page.locator('#user_id').selectOption(earlier.userId);
      await page.locator('#authorize').click();
      await page.waitForURL(`${merchantOrigin}/back?**`);
      return new URL(page.url());
    });
    const token = await channel.accounts.authorization.exchange(back.searchParams.get('app_auth_code')!);
    expect(token).toMatchObject({ userId: earlier.userId, authAppId: earlier.authAppId });
  });

  test('when the merchant presses Cancel, then the browser lands on the redirect URI with access_denied', async () => {
    const back = await browser.run(async (page) => {
      await page.goto(
        channel.accounts.authorization.pageUrl({ redirectUri: `${merchantOrigin}/back`, state: 's-3' }),
      );
      await page.locator('#cancel').click();
      await page.waitForURL(`${merchantOrigin}/back?**`);
      return new URL(page.url());
    });
    expect(back.searchParams.get('error')).toBe('access_denied');
    expect(back.searchParams.get('state')).toBe('s-3');
    expect(back.searchParams.has('app_auth_code')).toBe(false);
  });
});
