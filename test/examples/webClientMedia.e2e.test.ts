import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { jpeg, png } from '../support/images.js';
import { closeAll, patience, shot, useWebClient } from './webClientHarness.js';

/**
 * The reference web client in Chromium, posting with images: picked and pasted, seen before
 * posting with a progress bar, described (a gentle warning when not), shown in every post with
 * their alt text and blurhash, and opened full size. What a person sees is asserted.
 */
describe('the reference web client in Chromium: images', { timeout: 90_000 }, () => {
  const h = useWebClient();

  it('attaches images by picking and pasting, describes them, posts them, and shows them to a follower', async () => {
    const [author, reader] = await Promise.all([h.person('pic_author', { displayName: 'Pia Pictures' }), h.person('pic_reader')]);
    await h.follow(reader, author);
    const folder = mkdtempSync(join(tmpdir(), 'web-images-'));
    const harbour = join(folder, 'harbour.jpg');
    writeFileSync(harbour, await jpeg(640, 480));
    const page = author.page;

    await page.getByTestId('new-post').getByTestId('attach-input').setInputFiles([harbour]);
    const attachments = page.getByTestId('new-post').getByTestId('attachment');
    await expect.poll(() => attachments.count(), patience).toBe(1);
    // Seen before posting, with its upload's progress, and a warning until it is described.
    expect(await attachments.first().getByTestId('attachment-preview').evaluate((image: any) => image.naturalWidth)).toBe(640);
    expect(await attachments.first().getByTestId('upload-progress').count()).toBe(1);
    expect(await attachments.first().getByTestId('alt-warning').isVisible()).toBe(true);
    await expect.poll(() => attachments.first().getAttribute('data-state'), patience).toBe('ready');

    // A second image, pasted into the text.
    const pasted = (await png(200, 300)).toString('base64');
    await page.getByTestId('new-post').getByTestId('compose').evaluate((textarea: any, base64: string) => {
      const browser = globalThis as any;
      const bytes = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
      const data = new browser.DataTransfer();
      data.items.add(new browser.File([bytes], 'pasted.png', { type: 'image/png' }));
      textarea.dispatchEvent(new browser.ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true }));
    }, pasted);
    await expect.poll(() => attachments.count(), patience).toBe(2);
    await expect.poll(() => attachments.nth(1).getAttribute('data-state'), patience).toBe('ready');

    await attachments.first().getByTestId('alt-input').fill('The harbour at dusk, boats moored');
    expect(await attachments.first().getByTestId('alt-warning').isHidden()).toBe(true);
    expect(await attachments.nth(1).getByTestId('alt-warning').isVisible()).toBe(true);
    await page.getByTestId('new-post').getByTestId('compose').fill('Back home');
    await shot(page, 'images-composer');
    await page.getByTestId('new-post').getByTestId('publish').click();
    await expect.poll(() => attachments.count(), patience).toBe(0);

    // The follower sees both, in order, each with its alt text and a blurhash behind it: the post
    // came live, behind the "new posts" pill.
    const pill = reader.page.getByTestId('new-posts');
    await expect.poll(() => pill.isVisible(), patience).toBe(true);
    await pill.click();
    const post = reader.page.getByTestId('timeline').getByTestId('post').filter({ hasText: 'Back home' });
    await expect.poll(() => post.getByTestId('media-image').count(), patience).toBe(2);
    const images = post.getByTestId('media-image');
    expect(await images.nth(0).getAttribute('alt')).toBe('The harbour at dusk, boats moored');
    expect(await images.nth(1).getAttribute('alt')).toBe('');
    expect(await images.nth(0).evaluate((image: any) => image.style.backgroundImage)).toMatch(/^url\("data:image\/png;base64,/);
    await expect.poll(() => images.nth(0).evaluate((image: any) => image.complete && image.naturalWidth), patience).toBe(400);
    expect(await post.getByTestId('alt-badge').count()).toBe(1);

    await shot(reader.page, 'images-timeline');
    // Opened full size.
    await images.nth(0).click();
    const full = reader.page.getByTestId('lightbox').getByTestId('full-image');
    await expect.poll(() => full.evaluate((image: any) => image.complete && image.naturalWidth), patience).toBe(640);
    expect(await full.getAttribute('alt')).toBe('The harbour at dusk, boats moored');
    await shot(reader.page, 'images-full-size');
    await reader.page.keyboard.press('Escape');
    await expect.poll(() => reader.page.getByTestId('lightbox').count(), patience).toBe(0);
    expect(h.missing).toEqual([]);
    await closeAll(author, reader);
  });

  it('says why an image was refused, and allows at most four', async () => {
    const author = await h.person('pic_refused');
    const folder = mkdtempSync(join(tmpdir(), 'web-images-'));
    const fake = join(folder, 'fake.png');
    writeFileSync(fake, 'not an image at all');
    const form = author.page.getByTestId('new-post');
    await form.getByTestId('attach-input').setInputFiles([fake]);
    await expect.poll(() => form.getByTestId('upload-error').textContent(), patience).toMatch(/JPEG, PNG, WebP and GIF/);
    expect(await form.getByTestId('publish').isDisabled()).toBe(true);
    await form.getByTestId('remove-attachment').click();
    const files = await Promise.all([1, 2, 3, 4, 5].map(async (n) => {
      const path = join(folder, `photo${n}.png`);
      writeFileSync(path, await png(50 + n, 50));
      return path;
    }));
    await form.getByTestId('attach-input').setInputFiles(files);
    await expect.poll(() => form.getByTestId('attachment').count(), patience).toBe(4);
    expect(await form.getByTestId('compose-error').textContent()).toMatch(/up to 4 images/);
    expect(await form.getByTestId('attach').isDisabled()).toBe(true);
    await closeAll(author);
  });
});
