import { describe, expect, it } from 'vitest';
import { closeAll, patience, shot, texts, useWebClient } from './webClientHarness.js';

/**
 * The reference web client in Chromium, the journeys of discovery: tags and mentions as links, a
 * tag's page and following it into the home timeline, post search beside people, trending tags.
 */
describe('the reference web client in Chromium: discovery', { timeout: 60_000 }, () => {
  const h = useWebClient();
  const { person, post } = h;

  it('links tags and mentions, opens a tag page whose Follow brings its posts home, and shows trends', async () => {
    const writer = await person('writer');
    const reader = await person('reader');
    await post(writer, 'Morning walk in #Paris with @reader');
    await post(writer, 'Another #paris café');
    await post(reader, 'I like #paris too');
    // The queue counts the tags for trends, moments after the posts; the page reads trends once.
    await h.app.settled();
    const { page } = reader;
    await page.reload();

    // Trending, beside the home timeline: #paris, by two people.
    await expect.poll(() => page.getByTestId('trending').getByTestId('trend').first().textContent(), patience).toMatch(/#paris\s+2 people · 3 posts/);
    // reader follows nobody: only their own post is home.
    await expect.poll(() => texts(page), patience).toEqual(['I like #paris too']);

    await page.getByTestId('trending').getByRole('link', { name: '#paris' }).click();
    await expect.poll(() => page.getByTestId('tag-title').textContent(), patience).toBe('#paris');
    await expect.poll(() => texts(page), patience).toEqual(['I like #paris too', 'Another #paris café', 'Morning walk in #Paris with @reader']);
    // The mention and the tag in a post are links.
    const walk = page.getByTestId('post').filter({ hasText: 'Morning walk' });
    expect(await walk.getByTestId('mention').getAttribute('href')).toBe('#/u/reader');
    expect(await walk.getByTestId('tag-link').getAttribute('href')).toBe('#/tag/paris');
    await expect.poll(() => page.getByTestId('follow-tag').textContent(), patience).toBe('Follow tag');
    await page.getByTestId('follow-tag').click();
    await expect.poll(() => page.getByTestId('follow-tag').textContent(), patience).toBe('Following');
    await shot(page, 'tag-page');

    // Home now holds the tag's posts, though reader follows no one.
    await page.getByRole('link', { name: 'Home' }).click();
    await expect.poll(() => texts(page), patience).toEqual(['I like #paris too', 'Another #paris café', 'Morning walk in #Paris with @reader']);

    // A tag link in a post opens its page, where Following can be undone.
    await page.getByTestId('timeline').getByTestId('tag-link').first().click();
    await expect.poll(() => page.getByTestId('follow-tag').textContent(), patience).toBe('Following');
    await page.getByTestId('follow-tag').click();
    await expect.poll(() => page.getByTestId('follow-tag').textContent(), patience).toBe('Follow tag');
    await page.getByRole('link', { name: 'Home' }).click();
    await expect.poll(() => texts(page), patience).toEqual(['I like #paris too']);
    await closeAll(writer, reader);
  });

  it('searches posts beside people: accents, every word, Chinese without spaces', async () => {
    const author = await person('finder');
    await post(author, 'Un café très noir');
    await post(author, '如何为社交feed场景设计缓存体系');
    const { page } = author;
    await page.getByRole('link', { name: 'Search' }).click();
    await page.getByTestId('search-input').fill('CAFE noir');
    await expect.poll(() => page.getByTestId('post-results').getByTestId('text').allTextContents(), patience).toEqual(['Un café très noir']);
    await page.getByTestId('search-input').fill('缓存');
    await expect.poll(() => page.getByTestId('post-results').getByTestId('text').allTextContents(), patience).toEqual(['如何为社交feed场景设计缓存体系']);
    await shot(page, 'post-search');
    await page.getByTestId('search-input').fill('nothing matches this');
    await expect.poll(() => page.getByTestId('post-search').isHidden(), patience).toBe(true);
    await closeAll(author);
  });
});
