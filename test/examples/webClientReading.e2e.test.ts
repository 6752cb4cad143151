import { describe, expect, it } from 'vitest';
import { closeAll, patience, postWith, shot, texts, useWebClient } from './webClientHarness.js';

/**
 * The reference web client in Chromium, the journeys about what reaches a reader: notifications
 * and their badge, bookmarks, who may see a post, and what came since the last visit. What a
 * person sees is asserted, as in webClient.e2e.
 */
describe('the reference web client in Chromium: reading', { timeout: 60_000 }, () => {
  const h = useWebClient();
  const { person, post, follow } = h;

  it('notifications: a like moves the badge live, the page says who, and opening it clears the badge', async () => {
    const [author, liker, third] = await Promise.all([
      person('note_author', { displayName: 'Ann Author' }),
      person('note_liker', { displayName: 'Bob Liker' }),
      person('note_third', { displayName: 'Cy Third' }),
    ]);
    const postId = await post(author, 'a post worth liking');
    const badge = author.page.getByTestId('unread-badge');
    await expect.poll(() => texts(author.page), patience).toEqual(['a post worth liking']);
    expect(await badge.isHidden()).toBe(true);

    // Bob likes it in his browser; Ann's badge says so without a reload.
    await liker.page.goto(`${h.web.url}#/u/note_author`);
    await postWith(liker.page, 'a post worth liking').getByTestId('like').click();
    await expect.poll(() => badge.textContent(), patience).toBe('1');
    expect(await badge.isVisible()).toBe(true);
    expect(await author.page.getByRole('link', { name: 'Notifications, 1 unread' }).count()).toBe(1);

    await author.page.getByRole('link', { name: 'Notifications' }).click();
    const items = author.page.getByTestId('notification');
    await expect.poll(() => items.getByTestId('notification-text').allTextContents(), patience).toEqual(['Bob Liker liked your post']);
    expect(await items.first().getByTestId('notification-post').textContent()).toBe('a post worth liking');
    expect(await items.first().getByTestId('unread').textContent()).toBe('New');
    await expect.poll(() => badge.isHidden(), patience).toBe(true);

    // Someone joins the group while the page is open: it changes in place, and stays read.
    await h.as(third, 'mutation ($id: ID!) { likePost(id: $id) { id } }', { id: postId });
    await expect.poll(() => items.getByTestId('notification-text').allTextContents(), patience).toEqual(['Cy Third and Bob Liker liked your post']);
    await author.page.waitForTimeout(300);
    expect(await badge.isHidden()).toBe(true);

    // Elsewhere, a follow and a mention count up; the page lists each, newest first, and clears them.
    await author.page.getByRole('link', { name: 'Home' }).click();
    await follow(liker, author);
    await expect.poll(() => badge.textContent(), patience).toBe('1');
    await post(third, 'have you met @note_author?');
    await expect.poll(() => badge.textContent(), patience).toBe('2');
    await author.page.getByRole('link', { name: 'Notifications' }).click();
    await expect.poll(() => items.getByTestId('notification-text').allTextContents(), patience).toEqual([
      'Cy Third mentioned you',
      'Bob Liker followed you',
      'Cy Third and Bob Liker liked your post',
    ]);
    expect(await items.getByTestId('unread').count()).toBe(2);
    await expect.poll(() => badge.isHidden(), patience).toBe(true);
    await shot(author.page, 'notifications');

    // Read on another device too: a fresh page starts with no badge.
    await author.page.reload();
    await author.page.getByTestId('notification').first().waitFor(patience);
    expect(await items.getByTestId('unread').count()).toBe(0);
    expect(await badge.isHidden()).toBe(true);
    await closeAll(author, liker, third);
  });

  it('bookmarks: the button keeps a post, disabled on its way, and the Bookmarks page lists it until it is let go', async () => {
    const [writer, reader] = await Promise.all([person('mark_writer'), person('mark_reader')]);
    await follow(reader, writer);
    await post(writer, 'keep this one');
    await post(writer, 'and not this one');
    const { page } = reader;
    await page.getByRole('link', { name: 'Bookmarks' }).click();
    await expect.poll(() => page.getByTestId('status').textContent(), patience).toBe('No bookmarks yet. Press the bookmark button under a post to keep it here.');

    await page.getByRole('link', { name: 'Home' }).click();
    await page.getByTestId('refresh').click();
    const button = postWith(page, 'keep this one').getByTestId('bookmark');
    await button.waitFor(patience);
    expect(await button.getAttribute('aria-pressed')).toBe('false');
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    await page.route(h.app.url, async (route) => {
      if (route.request().postData()?.includes('mutation Bookmark')) await held;
      await route.continue();
    });
    await button.click();
    await expect.poll(() => button.isDisabled(), patience).toBe(true);
    release();
    await expect.poll(() => button.getAttribute('aria-pressed'), patience).toBe('true');
    expect(await button.isEnabled()).toBe(true);
    await page.unroute(h.app.url);

    await page.getByRole('link', { name: 'Bookmarks' }).click();
    await expect.poll(() => texts(page), patience).toEqual(['keep this one']);
    expect(await page.getByTestId('count').textContent()).toBe('1 post');
    await shot(page, 'bookmarks');
    await postWith(page, 'keep this one').getByTestId('bookmark').click();
    await expect.poll(() => texts(page), patience).toEqual([]);
    expect(await page.getByTestId('status').textContent()).toBe('No bookmarks yet. Press the bookmark button under a post to keep it here.');
    await page.getByRole('link', { name: 'Home' }).click();
    await expect.poll(() => postWith(page, 'keep this one').getByTestId('bookmark').getAttribute('aria-pressed'), patience).toBe('false');
    await closeAll(writer, reader);
  });

  it('visibility: followers-only and mentioned-only posts are labelled, reach only who may see them, and cannot be reposted', async () => {
    const [author, follower, friend] = await Promise.all([person('vis_author', { displayName: 'Vi Author' }), person('vis_follower'), person('vis_friend', { displayName: 'Fern Friend' })]);
    await follow(follower, author);
    const { page } = author;
    const compose = page.getByTestId('new-post');
    const publish = async (text: string, who: string) => {
      await compose.getByLabel('Who can see this').selectOption({ label: who });
      await compose.getByTestId('compose').fill(text);
      await compose.getByTestId('publish').click();
      await expect.poll(() => texts(page), patience).toContain(text);
    };
    await publish('for followers only', 'Followers only');
    expect(await compose.getByTestId('visibility-hint').isHidden()).toBe(true);
    await compose.getByLabel('Who can see this').selectOption({ label: 'Mentioned only' });
    expect(await compose.getByTestId('visibility-hint').textContent()).toBe('Only the accounts you @mention will see it.');
    await publish('psst @vis_friend', 'Mentioned only');
    await publish('for everyone', 'Everyone');
    expect(await texts(page)).toEqual(['for everyone', 'psst @vis_friend', 'for followers only']);
    expect(await postWith(page, 'for followers only').getByTestId('visibility').textContent()).toBe('Followers only');
    expect(await postWith(page, 'psst @vis_friend').getByTestId('visibility').textContent()).toBe('Mentioned only');
    expect(await postWith(page, 'for everyone').getByTestId('visibility').count()).toBe(0);

    // The follower: public and followers-only, never the mention of someone else; no reposting a limited post.
    await follower.page.getByTestId('refresh').click();
    await expect.poll(() => texts(follower.page), patience).toEqual(['for everyone', 'for followers only']);
    const limited = postWith(follower.page, 'for followers only');
    expect(await limited.getByTestId('visibility').textContent()).toBe('Followers only');
    expect(await limited.getByTestId('repost').isDisabled()).toBe(true);
    expect(await limited.getByTestId('repost').getAttribute('title')).toBe('Only public posts can be reposted');
    expect(await postWith(follower.page, 'for everyone').getByTestId('repost').isEnabled()).toBe(true);
    await shot(follower.page, 'visibility');

    // The one mentioned, who does not follow: the public post and the mention, with a link to their profile.
    await friend.page.goto(`${h.web.url}#/u/vis_author`);
    await expect.poll(() => texts(friend.page), patience).toEqual(['for everyone', 'psst @vis_friend']);
    const mention = postWith(friend.page, 'psst @vis_friend').getByTestId('mention');
    expect(await mention.textContent()).toBe('@vis_friend');
    await mention.click();
    await expect.poll(() => friend.page.getByTestId('profile-name').textContent(), patience).toBe('Fern Friend');
    await closeAll(author, follower, friend);
  });

  it('the read marker: what came since the last visit is counted and set apart, on any device', async () => {
    const [writer, reader] = await Promise.all([person('since_writer'), person('since_reader')]);
    await follow(reader, writer);
    const marker = () => h.as<{ timelineMarker: { unreadCount: number } }>(reader, '{ timelineMarker { unreadCount } }').then((data) => data.timelineMarker.unreadCount);
    await post(writer, 'read before');
    const { page } = reader;
    await page.getByTestId('refresh').click();
    await expect.poll(() => texts(page), patience).toEqual(['read before']);
    // Shown on top is read: the marker moves there by itself.
    await expect.poll(marker, patience).toBe(0);
    expect(await page.getByTestId('read-marker').count()).toBe(0);

    await post(writer, 'new one');
    await post(writer, 'newer one');
    await page.reload();
    await expect.poll(() => texts(page), patience).toEqual(['newer one', 'new one', 'read before']);
    await expect.poll(() => page.getByTestId('unread-count').textContent(), patience).toBe(' · 2 new since you last read');
    // The divider sits between the new posts and the one read before.
    const order = await page.getByTestId('timeline').locator(':scope > li').evaluateAll((items) =>
      items.map((item) => (item.querySelector('[data-testid="read-marker"]') ? '—' : item.querySelector('[data-testid="text"]')!.textContent)),
    );
    expect(order).toEqual(['newer one', 'new one', '—', 'read before']);
    expect(await page.getByTestId('read-marker').textContent()).toBe('You read up to here');
    await shot(page, 'read-marker');
    await expect.poll(marker, patience).toBe(0);

    // Read here, so read everywhere: another visit has nothing new.
    await page.reload();
    await expect.poll(() => texts(page), patience).toEqual(['newer one', 'new one', 'read before']);
    await page.waitForTimeout(300);
    expect(await page.getByTestId('unread-count').textContent()).toBe('');
    expect(await page.getByTestId('read-marker').count()).toBe(0);
    await closeAll(writer, reader);
  });
});
