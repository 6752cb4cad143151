import { describe, expect, it } from 'vitest';
import { closeAll, patience, postWith, shot, useWebClient } from './webClientHarness.js';

/**
 * The reference web client in Chromium, the journeys of conversations: a whole thread (what a post
 * answers above it, its reply tree indented below it, more loaded on scroll), quoting a post, editing
 * one's own post and reading its history, and pinning posts to a profile. What a person sees is
 * asserted, as in webClient.e2e.
 */
describe('the reference web client in Chromium: conversations', { timeout: 90_000 }, () => {
  const h = useWebClient({ RATE_LIMIT_POSTS_PER_MINUTE: '100000' });
  const { person, post, follow } = h;

  it('a thread shows its ancestors above and the reply tree indented below, loading more as the reader scrolls', async () => {
    const [asker, helper] = await Promise.all([person('conv_asker'), person('conv_helper')]);
    const root = await post(asker, 'How do threads work?');
    const middle = await post(helper, 'Replies keep their place', { replyTo: root });
    const focus = await post(asker, 'Which place?', { replyTo: middle });
    const deep = await post(helper, 'Depth first, oldest first', { replyTo: focus });
    await post(asker, 'Thanks!', { replyTo: deep });
    // Enough direct replies to need more than one page (20) below the focused post.
    for (let index = 0; index < 25; index++) await post(helper, `side note ${String(index).padStart(2, '0')}`, { replyTo: focus });

    await asker.page.goto(`${h.web.url}#/p/${encodeURIComponent(focus)}`);
    await expect.poll(() => asker.page.getByTestId('parent').getByTestId('text').allTextContents(), patience).toEqual(['How do threads work?', 'Replies keep their place']);
    expect(await asker.page.getByTestId('main-post').getByTestId('text').textContent()).toBe('Which place?');
    const replies = asker.page.getByTestId('replies').getByTestId('thread-reply');
    await expect.poll(() => replies.count(), patience).toBeGreaterThanOrEqual(20);
    // Reading order: the first reply, then its own reply one step further right.
    expect(await replies.nth(0).getByTestId('text').first().textContent()).toBe('Depth first, oldest first');
    expect(await replies.nth(0).getAttribute('data-depth')).toBe('1');
    expect(await replies.nth(1).getByTestId('text').first().textContent()).toBe('Thanks!');
    expect(await replies.nth(1).getAttribute('data-depth')).toBe('2');
    // Scrolling to the end loads the rest, each reply once.
    await asker.page.getByTestId('replies').getByTestId('thread-reply').last().scrollIntoViewIfNeeded();
    await asker.page.mouse.wheel(0, 10_000);
    await expect.poll(() => replies.count(), patience).toBe(27);
    const shown = await asker.page.getByTestId('replies').getByTestId('text').allTextContents();
    expect(new Set(shown).size).toBe(27);
    expect(shown.slice(2)).toEqual(Array.from({ length: 25 }, (_, index) => `side note ${String(index).padStart(2, '0')}`));
    await shot(asker.page, 'conversation-thread');
    await closeAll(asker, helper);
  });

  it('quotes a post, with the quoted card in the timeline, and tells its author', async () => {
    const [writer, quoter] = await Promise.all([person('conv_writer', { displayName: 'Wren Writer' }), person('conv_quoter')]);
    await follow(quoter, writer);
    await post(writer, 'A thought worth quoting');
    await quoter.page.getByTestId('refresh').click();
    const original = postWith(quoter.page, 'A thought worth quoting');
    await original.waitFor(patience);
    await original.getByTestId('quote').click();
    await quoter.page.getByTestId('quote-form-text').fill('I agree with this');
    await quoter.page.getByTestId('quote-form-submit').click();
    // The form closes once the API took the quote; the quoter's own post then comes to the top.
    await quoter.page.getByTestId('quote-form').waitFor({ state: 'detached', ...patience });
    const quote = postWith(quoter.page, 'I agree with this');
    await expect
      .poll(async () => {
        if ((await quote.count()) === 0) await quoter.page.getByTestId('refresh').click();
        return quote.count();
      }, patience)
      .toBe(1);
    expect(await quote.getByTestId('quoted-card').getByTestId('quoted-text').textContent()).toBe('A thought worth quoting');
    expect(await quote.getByTestId('quoted-card').locator('.name').textContent()).toBe('Wren Writer');

    await writer.page.getByRole('link', { name: 'Notifications' }).click();
    await expect.poll(() => writer.page.getByTestId('notification').getByTestId('notification-text').allTextContents(), patience).toContain('conv_quoter quoted your post');
    await shot(quoter.page, 'conversation-quote');
    await closeAll(writer, quoter);
  });

  it('edits one\'s own post: the new text everywhere, an "edited" mark, and the history on click', async () => {
    const [author, reader] = await Promise.all([person('conv_editor'), person('conv_reader')]);
    await follow(reader, author);
    await post(author, 'Teh typo');
    await author.page.getByTestId('refresh').click();
    const mine = postWith(author.page, 'Teh typo');
    await mine.waitFor(patience);
    expect(await mine.getByTestId('edited').count()).toBe(0);
    await mine.getByTestId('edit').click();
    await author.page.getByTestId('edit-form-text').fill('The typo, fixed');
    await author.page.getByTestId('edit-form-submit').click();
    const fixed = postWith(author.page, 'The typo, fixed');
    await fixed.waitFor(patience);
    await fixed.getByTestId('edited').click();
    await expect.poll(() => fixed.getByTestId('edit-version-text').allTextContents(), patience).toEqual(['Teh typo']);

    // The reader's timeline shows the new text and the mark; someone else's post has no Edit button.
    await reader.page.getByTestId('refresh').click();
    const seen = postWith(reader.page, 'The typo, fixed');
    await seen.waitFor(patience);
    expect(await seen.getByTestId('edited').count()).toBe(1);
    expect(await seen.getByTestId('edit').count()).toBe(0);
    await shot(author.page, 'conversation-edit');
    await closeAll(author, reader);
  });

  it('pins posts to the profile, most recently pinned first, and unpins them', async () => {
    const [author, visitor] = await Promise.all([person('conv_pinner'), person('conv_visitor')]);
    await post(author, 'first pinned');
    await post(author, 'second pinned');
    await author.page.goto(`${h.web.url}#/u/conv_pinner`);
    const timeline = author.page.getByTestId('timeline');
    await postWith(author.page, 'first pinned').first().waitFor(patience);
    await timeline.getByTestId('post').filter({ hasText: 'first pinned' }).getByTestId('pin').click();
    await expect.poll(() => author.page.getByTestId('pinned').getByTestId('text').allTextContents(), patience).toEqual(['first pinned']);
    await timeline.getByTestId('post').filter({ hasText: 'second pinned' }).getByTestId('pin').click();
    await expect.poll(() => author.page.getByTestId('pinned').getByTestId('text').allTextContents(), patience).toEqual(['second pinned', 'first pinned']);
    expect(await author.page.getByTestId('pinned').getByTestId('pinned-badge').count()).toBe(2);

    await visitor.page.goto(`${h.web.url}#/u/conv_pinner`);
    await expect.poll(() => visitor.page.getByTestId('pinned').getByTestId('text').allTextContents(), patience).toEqual(['second pinned', 'first pinned']);
    expect(await visitor.page.getByTestId('pinned').getByTestId('unpin').count()).toBe(0);

    await author.page.getByTestId('pinned').getByTestId('post').filter({ hasText: 'second pinned' }).getByTestId('unpin').click();
    await expect.poll(() => author.page.getByTestId('pinned').getByTestId('text').allTextContents(), patience).toEqual(['first pinned']);
    await shot(author.page, 'conversation-pins');
    await closeAll(author, visitor);
  });
});
