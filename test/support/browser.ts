/**
 * Pages tested in a real browser: Debian's Chromium driven through playwright-core (this network
 * cannot download Playwright's own browsers). `launchBrowser()` once per file, then each test runs
 * its scenario with `browser.run(async (page) => …)` on a page of its own. When a scenario fails,
 * its full-page screenshot and HTML are kept in test-artifacts/browser/<test name>.{png,html}, and
 * the error it rethrows also names them, with the page's console errors and failed requests.
 */
import fs from 'node:fs';
import path from 'node:path';
import jsQR from 'jsqr';
import { chromium, type Browser, type Locator, type Page } from 'playwright-core';
import { ROOT_DIR } from '../../src/platform/paths';

export const BROWSER_ARTIFACTS_DIR = path.join(ROOT_DIR, 'test-artifacts', 'browser');

const DEFAULT_CHROMIUM = '/usr/bin/chromium';

/** Headless, and nothing that reaches the network on its own or needs a GPU or a sandbox. */
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Below the browser tests' jest timeout, so that a stuck step fails in the scenario and leaves its artifacts. */
const ACTION_TIMEOUT_MS = 20_000;
const NAVIGATION_TIMEOUT_MS = 60_000;

const INSTALL_HINT =
  "Install Debian's package (`sudo apt-get update && sudo apt-get install -y --no-install-recommends chromium`; " +
  '.ci/run does this on a machine without it), or set CHROMIUM_PATH to a Chromium or Chrome binary.';

function isExecutable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

/**
 * The Chromium to drive: CHROMIUM_PATH when set (and then only it), else /usr/bin/chromium, else
 * `chromium` on PATH. Throws how to install it, so that the browser tests fail rather than skip.
 */
export function chromiumPath(): string {
  const configured = process.env.CHROMIUM_PATH;
  if (configured) {
    if (isExecutable(configured)) return configured;
    throw new Error(
      `CHROMIUM_PATH=${configured} is not an executable file: the browser tests need Chromium. ${INSTALL_HINT}`,
    );
  }
  if (isExecutable(DEFAULT_CHROMIUM)) return DEFAULT_CHROMIUM;
  for (const dir of (process.env.PATH ?? '').split(path.delimiter).filter(Boolean)) {
    const candidate = path.join(dir, 'chromium');
    if (isExecutable(candidate)) return candidate;
  }
  throw new Error(
    `Chromium was not found (${DEFAULT_CHROMIUM}, or chromium on PATH): the browser tests need it. ${INSTALL_HINT}`,
  );
}

export interface ScenarioOptions {
  /** The artifacts' file name; the current test's name by default. */
  name?: string;
  /** The page's size; Playwright's default (1280×720) when not given. */
  viewport?: { width: number; height: number };
  /** The browser's user agent (a wallet's in-app browser, say); Chromium's own when not given. */
  userAgent?: string;
  /** The browser's language (Accept-Language and navigator.language); Chromium's default when not given. */
  locale?: string;
}

export interface TestBrowser {
  /**
   * Runs `scenario` on a new page in a context of its own (no cookies, storage or cache shared
   * with other scenarios). On failure, saves the page's screenshot and HTML and rethrows.
   */
  run<T>(scenario: (page: Page) => Promise<T>, options?: ScenarioOptions): Promise<T>;
  close(): Promise<void>;
}

/** A file name from a test's name: "when a buyer …, then …" → "when-a-buyer-then". */
export function artifactName(testName: string): string {
  const slug = testName
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 150)
    .replace(/-+$/, '');
  return slug || 'scenario';
}

/** What went wrong on the page besides the scenario's own error, one line each. */
function watchPage(page: Page): string[] {
  const problems: string[] = [];
  page.on('console', (message) => {
    if (message.type() !== 'error') return;
    const { url, lineNumber } = message.location();
    problems.push(`console error: ${message.text()}${url ? ` (${url}:${lineNumber})` : ''}`);
  });
  page.on('pageerror', (error) => problems.push(`uncaught in the page: ${error.message}`));
  page.on('requestfailed', (request) =>
    problems.push(
      `request failed: ${request.method()} ${request.url()}: ${request.failure()?.errorText ?? 'unknown'}`,
    ),
  );
  page.on('response', (response) => {
    if (response.status() >= 400) {
      problems.push(`HTTP ${response.status()}: ${response.request().method()} ${response.url()}`);
    }
  });
  return problems;
}

/** Saves the page as it is now; never throws, says what it kept or why not. */
async function saveArtifacts(page: Page, name: string): Promise<string[]> {
  const base = path.join(BROWSER_ARTIFACTS_DIR, name);
  const notes: string[] = [];
  try {
    fs.mkdirSync(BROWSER_ARTIFACTS_DIR, { recursive: true });
    await page.screenshot({ path: `${base}.png`, fullPage: true, timeout: 10_000 });
    notes.push(`screenshot: ${path.relative(ROOT_DIR, `${base}.png`)}`);
  } catch (error) {
    notes.push(`no screenshot: ${(error as Error).message.split('\n')[0]}`);
  }
  try {
    fs.writeFileSync(`${base}.html`, await page.content());
    notes.push(`html: ${path.relative(ROOT_DIR, `${base}.html`)}`);
  } catch (error) {
    notes.push(`no html: ${(error as Error).message.split('\n')[0]}`);
  }
  notes.push(`page url: ${page.url()}`);
  return notes;
}

/** The same error, its message (and the stack that repeats it) followed by `details`. */
function withDetails(error: unknown, details: string[]): unknown {
  if (!(error instanceof Error)) return error;
  // Read first: V8 formats a stack when it is first read, with the message as it is then.
  const stack = error.stack;
  const original = error.message;
  const message = `${original}\n\nIn the browser:\n${details.map((line) => `  ${line}`).join('\n')}`;
  error.message = message;
  if (stack?.includes(original)) error.stack = stack.replace(original, () => message);
  return error;
}

export async function launchBrowser(): Promise<TestBrowser> {
  const executablePath = chromiumPath();
  let browser: Browser;
  try {
    // launch() gives the browser a fresh temporary profile and removes it on close.
    browser = await chromium.launch({ executablePath, args: CHROMIUM_ARGS, timeout: 60_000 });
  } catch (error) {
    throw new Error(
      `Chromium at ${executablePath} did not start: ${(error as Error).message}\n${INSTALL_HINT}`,
    );
  }
  return {
    async run(scenario, options = {}) {
      const name = artifactName(options.name ?? expect.getState().currentTestName ?? 'scenario');
      // A passing run leaves no artifact of an earlier failure behind.
      for (const ext of ['png', 'html'])
        fs.rmSync(path.join(BROWSER_ARTIFACTS_DIR, `${name}.${ext}`), { force: true });
      const context = await browser.newContext({
        ...(options.viewport ? { viewport: options.viewport } : {}),
        ...(options.userAgent ? { userAgent: options.userAgent } : {}),
        ...(options.locale ? { locale: options.locale } : {}),
      });
      context.setDefaultTimeout(ACTION_TIMEOUT_MS);
      context.setDefaultNavigationTimeout(NAVIGATION_TIMEOUT_MS);
      try {
        const page = await context.newPage();
        const problems = watchPage(page);
        try {
          return await scenario(page);
        } catch (error) {
          const saved = await saveArtifacts(page, name);
          throw withDetails(error, [
            ...saved,
            ...(problems.length ? problems : ['no console errors or failed requests']),
          ]);
        }
      } finally {
        await context.close();
      }
    },
    close: () => browser.close(),
  };
}

// The page functions below run in Chromium; the project compiles without the DOM library, so they
// name the little of it they use.
interface PageImage {
  src: string;
  width: number;
  height: number;
  complete: boolean;
  naturalWidth: number;
  naturalHeight: number;
  decode(): Promise<void>;
}
interface PageCanvas {
  width: number;
  height: number;
  getContext(kind: '2d'): {
    fillStyle: string;
    fillRect(x: number, y: number, width: number, height: number): void;
    drawImage(image: PageImage, x: number, y: number): void;
    getImageData(x: number, y: number, width: number, height: number): { data: Uint8ClampedArray };
  } | null;
}
declare const document: { createElement(tag: 'canvas'): PageCanvas };
declare const Image: new () => PageImage;

/** An <img>'s load state: `naturalWidth` is 0 when the browser could not decode it. */
export function imageState(
  image: Locator,
): Promise<{ complete: boolean; naturalWidth: number; naturalHeight: number }> {
  return image.evaluate((element: PageImage) => ({
    complete: element.complete,
    naturalWidth: element.naturalWidth,
    naturalHeight: element.naturalHeight,
  }));
}

/**
 * The text of the QR code `element` shows on screen, as a phone's camera would read it: the
 * element's screenshot (what Chromium painted), decoded back to pixels by the browser inside a
 * white quiet zone, then read by jsQR. Undefined when no QR code can be read there.
 */
export async function readQrOnScreen(element: Locator): Promise<string | undefined> {
  const png = await element.screenshot();
  const margin = 16;
  // A blank page of its own: the page under test's CSP and scripts stay out of the way.
  const scratch = await element.page().context().newPage();
  const pixels = await scratch.evaluate(
    async ({ base64, margin }) => {
      const image = new Image();
      image.src = `data:image/png;base64,${base64}`;
      await image.decode();
      const canvas = document.createElement('canvas');
      canvas.width = image.width + 2 * margin;
      canvas.height = image.height + 2 * margin;
      const context = canvas.getContext('2d')!;
      context.fillStyle = '#fff';
      context.fillRect(0, 0, canvas.width, canvas.height);
      context.drawImage(image, margin, margin);
      const { data } = context.getImageData(0, 0, canvas.width, canvas.height);
      // As base64: an array of numbers takes seconds to pass through Playwright's serializer.
      let binary = '';
      for (let i = 0; i < data.length; i += 0x8000)
        binary += String.fromCharCode(...data.subarray(i, i + 0x8000));
      return { width: canvas.width, height: canvas.height, rgba: btoa(binary) };
    },
    { base64: png.toString('base64'), margin },
  );
  await scratch.close();
  return jsQR(new Uint8ClampedArray(Buffer.from(pixels.rgba, 'base64')), pixels.width, pixels.height)?.data;
}
