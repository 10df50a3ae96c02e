import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { chromium, type BrowserContext, type Page, type Request } from 'playwright-core';

/** Debian's chromium package; playwright-core drives it, it downloads no browser of its own. */
export const CHROMIUM = '/usr/bin/chromium';
export const SCREENSHOTS = fileURLToPath(new URL('../../test-artifacts/console/', import.meta.url));

export interface TestBrowser {
  context: BrowserContext;
  page: Page;
  /** Every URL a page of this browser requested, in order. */
  requests: string[];
  /** What the pages said that a failing test should show: errors, console lines, refused requests. */
  diagnostics: string[];
  screenshot(name: string): Promise<void>;
  close(): Promise<void>;
}

/** Headless Chromium with a fresh profile and nothing running in the background. */
export async function launchBrowser(): Promise<TestBrowser> {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: install Debian's chromium package (apt-get install -y chromium).`);
  const profile = mkdtempSync(join(tmpdir(), 'slipway-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1280, height: 900 },
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  const requests: string[] = [];
  context.on('request', (request) => requests.push(request.url()));
  const diagnostics: string[] = [];
  const note = (line: string) => diagnostics.push(`${new Date().toISOString()} ${line}`);
  context.on('requestfailed', (request) =>
    note(`request failed: ${request.method()} ${request.url()} ${request.failure()?.errorText ?? ''}`),
  );
  context.on('response', (response) => {
    if (response.status() >= 400) note(`answer ${response.status()}: ${response.request().method()} ${response.url()}`);
  });
  const page = context.pages()[0] ?? (await context.newPage());
  page.on('pageerror', (error) => note(`page error: ${error.stack ?? error.message}`));
  page.on('console', (message) => note(`console ${message.type()}: ${message.text()}`));
  mkdirSync(SCREENSHOTS, { recursive: true });
  return {
    context,
    page,
    requests,
    diagnostics,
    screenshot: async (name) => {
      await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
    },
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** Requests that left this machine: anything not to a loopback address or *.localhost. */
export function nonLoopback(urls: string[]): string[] {
  return urls.filter((url) => {
    const parsed = new URL(url);
    if (parsed.protocol === 'data:' || parsed.protocol === 'blob:' || parsed.protocol === 'about:') return false;
    const host = parsed.hostname.replace(/^\[|\]$/g, '');
    return !(host === 'localhost' || host.endsWith('.localhost') || /^127\./.test(host) || host === '::1');
  });
}

/** How far the page is wider than the window: 0 when nothing overflows horizontally. */
export function horizontalOverflow(page: Page): Promise<number> {
  return page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
}

/**
 * Navigates, trying again when Chromium aborted the load with ERR_NETWORK_CHANGED: it does so
 * whenever the machine's interfaces change, and every instance the daemon starts adds a veth pair.
 */
export async function gotoPage(page: Page, url: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await page.goto(url);
      return;
    } catch (error) {
      if (attempt === 3 || !String((error as Error).message).includes('ERR_NETWORK_CHANGED')) throw error;
    }
  }
}

/**
 * Loads a console page as a new document, never as a same-document hash change (whose render
 * would race the test's first keystrokes), and waits for its view to have rendered and taken
 * the focus.
 */
export async function openConsolePage(page: Page, url: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    // The page's own requests (its scripts, its API calls) are aborted the same way as a
    // navigation when an interface changes while they run: the page then never renders.
    let networkChanged = false;
    const onFailure = (request: Request) => {
      if (request.failure()?.errorText.includes('ERR_NETWORK_CHANGED')) networkChanged = true;
    };
    page.on('requestfailed', onFailure);
    try {
      await gotoPage(page, 'about:blank');
      await gotoPage(page, url);
      await page.waitForFunction(() => {
        const main = document.getElementById('main');
        return main !== null && !main.hasAttribute('aria-busy') && main.querySelector('h1') !== null;
      });
      // Rendered, perhaps around an aborted request (an error where data should be): load again.
      if (!networkChanged || attempt === 3) return;
    } catch (error) {
      if (attempt === 3 || !networkChanged) throw error;
    } finally {
      page.off('requestfailed', onFailure);
    }
  }
}

/**
 * Declares a test whose failure carries what the browser saw meanwhile: page errors, console
 * lines, refused requests. `browser` is read when the test runs, after the file's before hook.
 */
export type UiTestArgs = [() => Promise<void>] | [{ timeout: number }, () => Promise<void>];

export function uiTest(browser: () => TestBrowser | undefined, name: string, ...rest: UiTestArgs): void {
  const options = rest.length === 2 ? rest[0] : {};
  const body = rest.length === 2 ? rest[1] : rest[0];
  test(name, options, async () => {
    const from = browser()?.diagnostics.length ?? 0;
    try {
      await body();
    } catch (error) {
      const current = browser();
      if (!current || !(error instanceof Error)) throw error;
      const seen = current.diagnostics.slice(from);
      const page = await describePage(current.page);
      // The reporter prints the stack, which was written when the error was made: the
      // diagnostics go into a new error whose cause is the original.
      throw new Error(
        `${error.message}\n${page}\nWhat the browser saw during this test:\n${seen.length > 0 ? seen.join('\n') : '(nothing)'}`,
        { cause: error },
      );
    }
  });
}

/** The page's address and the start of its text, and a screenshot named after the time. */
async function describePage(page: Page): Promise<string> {
  try {
    const text = await Promise.race([
      page.evaluate(() => document.body?.innerText ?? ''),
      new Promise<string>((resolve) => setTimeout(() => resolve('(the page did not answer within 10 s)'), 10_000).unref()),
    ]);
    const file = join(SCREENSHOTS, `failure-${Date.now()}.png`);
    await page.screenshot({ path: file, fullPage: true, timeout: 10_000 }).catch(() => undefined);
    return `The page at ${page.url()} (screenshot ${file}) read:\n${text.slice(0, 1500)}`;
  } catch (error) {
    return `The page could not be read: ${(error as Error).message}`;
  }
}
