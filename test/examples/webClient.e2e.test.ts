import { existsSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveWebClient, type WebClientServer } from '../../examples/web/server.js';
import { startTestApp, testDatabaseUri, type TestApp } from '../support/testApp.js';

/** Debian's Chromium; Playwright's own browser downloads are out of reach here. */
const chromiumPath = '/usr/bin/chromium';
const patience = { timeout: 20_000 };

/**
 * The reference web client in a real browser: two people, a follow, a post that appears live in the
 * other's page, a scroll past the first page, and a delete that disappears, all across origins.
 */
describe('the reference web client in Chromium', () => {
  let app: TestApp;
  let web: WebClientServer;
  let browser: Browser;

  beforeAll(async () => {
    if (!existsSync(chromiumPath)) {
      throw new Error(`This test drives Debian's Chromium at ${chromiumPath}: install it with  apt-get update && apt-get install -y chromium`);
    }
    app = await startTestApp();
    web = await serveWebClient(app.url, 0);
    browser = await chromium.launch({ executablePath: chromiumPath, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await web?.stop();
    await app?.stop();
  });

  async function signUp(handle: string): Promise<Page> {
    const page = await (await browser.newContext()).newPage();
    await page.goto(web.url);
    await page.getByPlaceholder('handle').fill(handle);
    await page.getByPlaceholder('password').fill('correct horse battery');
    await page.getByRole('button', { name: 'Sign up' }).click();
    await page.getByTestId('me').waitFor(patience);
    return page;
  }
  const texts = (page: Page) => page.getByTestId('text').allTextContents();

  it('follows, sees a post live, scrolls past the first page, and sees a delete disappear', async () => {
    const writer = await signUp('writer');
    const reader = await signUp('reader');
    // 25 older posts, more than one page of 20, through the API.
    const token = await app.services.accounts.tokenFor('writer');
    for (let i = 0; i < 25; i++) await app.gql(`mutation { createPost(text: "older post ${i}") { id } }`, {}, token);

    await reader.getByTestId('follow-handle').fill('writer');
    await reader.getByTestId('follow').click();
    await expect.poll(async () => (await texts(reader)).length, patience).toBe(20);
    expect((await texts(reader))[0]).toBe('older post 24');

    // Infinite scroll: bringing the end of the list into view loads the next page.
    await reader.getByTestId('sentinel').scrollIntoViewIfNeeded();
    await expect.poll(async () => (await texts(reader)).length, patience).toBe(25);
    expect((await texts(reader)).at(-1)).toBe('older post 0');

    // A post written in one browser appears in the other without a reload.
    await writer.getByTestId('compose').fill('hello from the other browser');
    await writer.getByTestId('publish').click();
    await expect.poll(async () => (await texts(reader))[0], patience).toBe('hello from the other browser');
    await expect.poll(async () => (await texts(writer))[0], patience).toBe('hello from the other browser');

    // The author deletes it; it disappears from both pages.
    await writer.getByTestId('post').filter({ hasText: 'hello from the other browser' }).getByRole('button', { name: 'Delete' }).click();
    await expect.poll(async () => (await texts(reader)).includes('hello from the other browser'), patience).toBe(false);
    await expect.poll(async () => (await texts(writer)).includes('hello from the other browser'), patience).toBe(false);

    // Unfollow from a post's author: the author's posts leave the reader's timeline.
    await reader.getByRole('button', { name: 'Unfollow @writer' }).first().click();
    await expect.poll(async () => (await texts(reader)).length, patience).toBe(0);
  }, 120_000);

  it('reads the timeline over HTTP and WebSocket from an allowed origin, and is refused from another', async () => {
    // Two origins; only the first is on the production API's CORS list.
    const allowed = await serveWebClient('http://unused.invalid/graphql', 0, 'localhost');
    const other = await serveWebClient('http://unused.invalid/graphql', 0, '127.0.0.1');
    // Production refuses the embedded default: it gets a database of its own, dropped at the end.
    const production = await startTestApp({ NODE_ENV: 'production', MONGODB_URI: testDatabaseUri(), CORS_ORIGINS: allowed.url.replace(/\/$/, '') });
    try {
      const token = await production.signUp('crosser');
      await production.gql('mutation { createPost(text: "seen across origins") { id } }', {}, token);
      const tryFrom = async (origin: string) => {
        const page = await (await browser.newContext()).newPage();
        await page.goto(origin);
        return page.evaluate(
          async ({ url, token }) => {
            const http = await fetch(url, {
              method: 'POST',
              headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
              body: JSON.stringify({ query: '{ timeline { edges { node { text } } } }' }),
            })
              .then(async (response) => JSON.stringify(await response.json()))
              .catch(() => 'refused');
            const live = await new Promise<string>((resolve) => {
              const socket = new WebSocket(url.replace(/^http/, 'ws'), 'graphql-transport-ws');
              socket.onopen = () => socket.send(JSON.stringify({ type: 'connection_init', payload: { authorization: `Bearer ${token}` } }));
              socket.onmessage = (message) => {
                resolve(JSON.parse(String(message.data)).type);
                socket.close();
              };
              socket.onerror = () => resolve('refused');
            });
            return { http, live };
          },
          { url: production.url, token },
        );
      };
      expect(await tryFrom(allowed.url)).toEqual({
        http: JSON.stringify({ data: { timeline: { edges: [{ node: { text: 'seen across origins' } }] } } }),
        live: 'connection_ack',
      });
      expect(await tryFrom(other.url)).toEqual({ http: 'refused', live: 'refused' });
    } finally {
      await production.database.db.dropDatabase();
      await production.stop();
      await other.stop();
      await allowed.stop();
    }
  }, 60_000);
});
