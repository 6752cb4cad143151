/**
 * What every browser test of the reference web client shares: an API, the client served beside it,
 * Chromium, and the steps a journey is made of (a person signing up through the page, what the API
 * is asked directly to set a scene, and what the page shows).
 */
import { existsSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll } from 'vitest';
import { serveWebClient, type WebClientServer } from '../../examples/web/server.js';
import { startTestApp, type TestApp } from '../support/testApp.js';

// Browser globals the page callbacks use; the tests compile without the DOM library.
declare const localStorage: { getItem(key: string): string | null; setItem(key: string, value: string): void };

/** Debian's Chromium; Playwright's own browser downloads are out of reach here. */
const chromiumPath = '/usr/bin/chromium';
export const patience = { timeout: 15_000 };
/** Each journey's last screen, for review (not committed). */
const screenshots = join(dirname(fileURLToPath(import.meta.url)), 'screenshots');
export const phone = { width: 375, height: 740 };

export interface Person {
  page: Page;
  context: BrowserContext;
  handle: string;
  token: string;
}

export interface WebClientHarness {
  readonly app: TestApp;
  readonly web: WebClientServer;
  readonly browser: Browser;
  /** Responses of 400 and up from the web client's own origin (a missing favicon, say). */
  readonly missing: string[];
  open(viewport?: { width: number; height: number }): Promise<{ context: BrowserContext; page: Page }>;
  /** Signs a person up through the page, as a person does. */
  person(handle: string, options?: { displayName?: string; viewport?: { width: number; height: number } }): Promise<Person>;
  /** Posts through the API, to set a scene; the id. */
  post(author: Person, text: string, options?: { visibility?: 'PUBLIC' | 'FOLLOWERS' | 'MENTIONED'; replyTo?: string }): Promise<string>;
  follow(reader: Person, author: Person): Promise<void>;
  /** Runs one operation as `who` through the API, throwing its errors. */
  as<T = any>(who: Person, query: string, variables?: Record<string, unknown>): Promise<T>;
}

/** Starts the API (with `environment` on top of the tests'), the client and Chromium before the file's tests, and stops them after. */
export function useWebClient(environment: Record<string, string> = {}): WebClientHarness {
  let app: TestApp;
  let web: WebClientServer;
  let browser: Browser;
  const missing: string[] = [];

  beforeAll(async () => {
    if (!existsSync(chromiumPath)) {
      throw new Error(`This test drives Debian's Chromium at ${chromiumPath}: install it with  apt-get update && apt-get install -y chromium`);
    }
    mkdirSync(screenshots, { recursive: true });
    [app, browser] = await Promise.all([
      startTestApp(environment),
      chromium.launch({ executablePath: chromiumPath, args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu'] }),
    ]);
    web = await serveWebClient(app.url, 0);
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await web?.stop();
    await app?.stop();
  });

  const harness: WebClientHarness = {
    get app() {
      return app;
    },
    get web() {
      return web;
    },
    get browser() {
      return browser;
    },
    missing,
    async open(viewport = { width: 900, height: 900 }) {
      const context = await browser.newContext({ viewport });
      const page = await context.newPage();
      page.on('response', (response) => {
        if (response.url().startsWith(web.url) && response.status() >= 400) missing.push(`${response.status()} ${response.url()}`);
      });
      return { context, page };
    },
    async person(handle, options = {}) {
      const { context, page } = await harness.open(options.viewport);
      await page.goto(web.url);
      await page.getByTestId('tab-sign-up').click();
      await page.getByLabel('Handle').fill(handle);
      if (options.displayName) await page.getByLabel('Display name').fill(options.displayName);
      await page.getByLabel('Password').fill('correct horse battery');
      await page.getByTestId('submit').click();
      await page.getByTestId('me').waitFor(patience);
      const token = (await page.evaluate(() => localStorage.getItem('feed.token')))!;
      return { page, context, handle, token };
    },
    async post(author, text, options = {}) {
      const created = await harness.as<{ createPost: { id: string } }>(
        author,
        'mutation ($text: String!, $replyTo: ID, $visibility: Visibility) { createPost(text: $text, replyTo: $replyTo, visibility: $visibility) { id } }',
        { text, replyTo: options.replyTo ?? null, visibility: options.visibility ?? 'PUBLIC' },
      );
      return created.createPost.id;
    },
    async follow(reader, author) {
      await harness.as(reader, 'mutation ($handle: String!) { follow(handle: $handle) { id } }', { handle: author.handle });
    },
    async as(who, query, variables = {}) {
      const result = await app.gql(query, variables, who.token);
      if (result.errors) throw new Error(JSON.stringify(result.errors));
      return result.data;
    },
  };
  return harness;
}

/** The texts of the posts in the page's `timeline` list, top to bottom. */
export const texts = (page: Page) => page.getByTestId('timeline').getByTestId('text').allTextContents();
export const postWith = (page: Page, text: string) => page.getByTestId('post').filter({ has: page.getByTestId('text').getByText(text, { exact: true }) });
export const shot = (page: Page, journey: string) => page.screenshot({ path: join(screenshots, `${journey}.png`) });
export const closeAll = (...people: { context: BrowserContext }[]) => Promise.all(people.map((person) => person.context.close()));
/** The page's width as laid out: more than the window means sideways scrolling. */
export const layoutWidth = (page: Page) => page.evaluate(() => (globalThis as any).document.documentElement.scrollWidth as number);
