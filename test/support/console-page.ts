/**
 * The operator console's pages in a real browser, for the browser tests: signing in on the
 * login page, and a page's picture (for docs/console.md) checked with axe-core on the way.
 */
import path from 'node:path';
import axe from 'axe-core';
import type { Page } from 'playwright-core';

/** Signs in on the console's login page and waits for the signed-in layout. */
export async function signInOnConsolePage(
  page: Page,
  baseUrl: string,
  who: { username: string; password: string },
): Promise<void> {
  await page.goto(`${baseUrl}/console/login`);
  await page.getByTestId('login-username').fill(who.username);
  await page.getByTestId('login-password').fill(who.password);
  await page.getByTestId('login-submit').click();
  await page.getByTestId('current-operator').waitFor();
}

/** axe-core's serious and critical findings on the page as it is now, one line each. */
export async function seriousViolations(page: Page): Promise<string[]> {
  // Evaluated through the DevTools protocol: the console's CSP (no inline scripts) does not apply.
  await page.evaluate(axe.source);
  const found = await page.evaluate(async () => {
    const run = (globalThis as unknown as { axe: typeof axe }).axe.run;
    const result = await run({ exclude: [['.ant-message']] } as never, {
      runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] },
    });
    return result.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      nodes: v.nodes.map((n) => n.target.join(' ')),
    }));
  });
  return found
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.impact} ${v.id}: ${v.nodes.slice(0, 3).join(', ')}`);
}

/** Saves the page as `<dir>/<name>.png` and checks it with axe: no serious or critical violation. */
export async function consoleShotAndCheck(page: Page, dir: string, name: string): Promise<void> {
  // Charts and tables settle before the picture: no spinner left.
  await page.waitForLoadState('networkidle');
  await page
    .locator('.ant-spin-spinning')
    .first()
    .waitFor({ state: 'detached' })
    .catch(() => undefined);
  // A confirmation that was just answered fades out: checked half-transparent, its text would
  // read as low contrast. The page is checked once it is gone.
  for (const popover of await page.locator('.ant-popover').all()) await popover.waitFor({ state: 'hidden' });
  await page.screenshot({ path: path.join(dir, `${name}.png`) });
  expect({ page: name, violations: await seriousViolations(page) }).toEqual({ page: name, violations: [] });
}
