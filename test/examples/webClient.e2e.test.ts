import { describe, expect, it } from 'vitest';
import { serveWebClient } from '../../examples/web/server.js';
import { startTestApp, testDatabaseUri } from '../support/testApp.js';
import { closeAll, layoutWidth, phone, postWith, shot, texts, useWebClient, patience } from './webClientHarness.js';

// Browser globals the page callbacks use; this file compiles without the DOM library.
declare const localStorage: { getItem(key: string): string | null; setItem(key: string, value: string): void };
declare const sessionStorage: typeof localStorage;

/**
 * The reference web client in a real browser, one journey per test, asserting what a person sees:
 * text on screen, counts, and whether buttons can be pressed. Two browser contexts stand for two
 * people where a journey needs both. This file: signing in, the home timeline, posts and threads,
 * profiles and filters; webClientPeople and webClientReading hold the rest.
 */
describe('the reference web client in Chromium', { timeout: 60_000 }, () => {
  const h = useWebClient();
  const { person, post, follow, open } = h;
  const countOf = (list: string[], text: string) => list.filter((shown) => shown === text).length;

  it('sign-up errors say what to fix and keep what was typed', async () => {
    const { page, context } = await open();
    await page.goto(h.web.url);
    await expect.poll(() => page.title()).toBe('Feed');
    await page.getByTestId('tab-sign-up').click();
    await page.getByLabel('Handle').fill('Alice');
    await page.getByLabel('Password').fill('short');
    await page.getByTestId('submit').click();
    expect(await page.getByTestId('handle-error').textContent()).toBe('Handles are lowercase: use “alice”.');
    expect(await page.getByTestId('password-error').textContent()).toBe('Too short: at least 8 characters (you have 5).');
    expect(await page.getByLabel('Handle').inputValue()).toBe('Alice');
    expect(await page.getByLabel('Handle').getAttribute('aria-invalid')).toBe('true');
    await page.getByLabel('Handle').fill('a.b');
    await page.getByTestId('submit').click();
    expect(await page.getByTestId('handle-error').textContent()).toBe('Only a–z, 0–9 and _ are allowed, not “.”.');

    // A taken handle: the server's answer lands on the handle field; the password stays.
    await h.app.signUp('taken_name');
    await page.getByLabel('Handle').fill('taken_name');
    await page.getByLabel('Password').fill('correct horse battery');
    await page.getByTestId('submit').click();
    await expect.poll(() => page.getByTestId('handle-error').textContent(), patience).toBe('The handle "taken_name" is taken. Try another handle.');
    expect(await page.getByLabel('Password').inputValue()).toBe('correct horse battery');
    expect(await page.getByTestId('submit').isDisabled()).toBe(false);

    // Signing in with the wrong password: one line for the form, nothing cleared.
    await page.getByTestId('tab-sign-in').click();
    await page.getByLabel('Password').fill('not the password');
    await page.getByTestId('submit').click();
    await expect.poll(() => page.getByTestId('form-error').textContent(), patience).toBe('Wrong handle or password');
    expect(await page.getByLabel('Handle').inputValue()).toBe('taken_name');
    await shot(page, 'sign-up-errors');
    await context.close();
  });

  it('a garbage or expired saved token shows the sign-in form', async () => {
    const { page, context } = await open();
    await page.addInitScript(() => {
      if (!sessionStorage.getItem('seeded')) {
        sessionStorage.setItem('seeded', 'yes');
        localStorage.setItem('feed.token', 'garbage');
        localStorage.setItem('feed.handle', 'someone');
      }
    });
    await page.goto(h.web.url);
    await page.getByTestId('sign-in').waitFor(patience);
    expect(await page.getByTestId('notice').textContent()).toBe('Your session has ended. Sign in again to continue.');
    expect(await page.getByLabel('Handle').inputValue()).toBe('someone');
    expect(await page.evaluate(() => localStorage.getItem('feed.token'))).toBeNull();
    await shot(page, 'bad-token');

    // A token that was good until its account went away, while the page is open: the server closes
    // its live connection (4403), and the page signs out by itself.
    const gone = await person('soon_gone');
    await gone.page.getByTestId('empty').waitFor(patience);
    await h.app.gql('mutation { deleteAccount(password: "correct horse battery") }', {}, gone.token);
    await gone.page.getByTestId('sign-in').waitFor(patience);
    expect(await gone.page.getByTestId('notice').textContent()).toBe('Your session has ended. Sign in again to continue.');
    await closeAll({ context }, gone);
  });

  it('posting: a double click creates one post, shown once, with the button disabled meanwhile', async () => {
    const author = await person('poster', { displayName: 'Pat Poster' });
    const { page } = author;
    await page.getByTestId('empty').waitFor(patience);
    expect(await page.getByTestId('empty').textContent()).toContain('Your timeline is empty');
    const publish = page.getByTestId('new-post').getByTestId('publish');
    expect(await publish.isDisabled()).toBe(true);
    await page.getByTestId('new-post').getByTestId('compose').fill('only once, please');
    expect(await page.getByTestId('counter').textContent()).toBe('17/500');
    expect(await publish.isEnabled()).toBe(true);
    await publish.dblclick();
    await expect.poll(() => texts(page), patience).toEqual(['only once, please']);
    expect(await page.getByTestId('count').textContent()).toBe('1 post');
    // Time for a second request to have landed, had one been sent.
    await page.waitForTimeout(700);
    const stored = await h.app.gql('{ user(handle: "poster") { posts { edges { node { text } } } } }', {}, author.token);
    expect(stored.data.user.posts.edges).toHaveLength(1);
    expect(await texts(page)).toEqual(['only once, please']);
    expect(await page.getByTestId('new-post').getByTestId('compose').inputValue()).toBe('');
    expect(await publish.isDisabled()).toBe(true);
    const shown = postWith(page, 'only once, please');
    expect(await shown.locator('.name').textContent()).toBe('Pat Poster');
    expect(await shown.locator('.avatar').textContent()).toBe('PP');
    expect(await shown.locator('time').textContent()).toBe('now');

    // Keyboard: Ctrl+Enter posts from the text box.
    await page.getByTestId('new-post').getByTestId('compose').fill('typed and sent by keyboard');
    await page.keyboard.press('Control+Enter');
    await expect.poll(() => texts(page), patience).toEqual(['typed and sent by keyboard', 'only once, please']);
    expect(await page.getByTestId('count').textContent()).toBe('2 posts');
    await shot(page, 'posting');
    expect(h.missing).toEqual([]);
    await closeAll(author);
  });

  it('a live post waits behind the pill, shows once when clicked, and once again after Refresh', async () => {
    const [writer, reader] = await Promise.all([person('live_writer', { displayName: 'Wren Writer' }), person('live_reader')]);
    await follow(reader, writer);
    await post(writer, 'already there');
    await reader.page.getByTestId('refresh').click();
    await expect.poll(() => texts(reader.page), patience).toEqual(['already there']);

    // A post from someone else does not shift the list: the pill says it is there.
    await writer.page.getByTestId('new-post').getByTestId('compose').fill('fresh from the other browser');
    await writer.page.getByTestId('new-post').getByTestId('publish').click();
    await expect.poll(() => reader.page.getByTestId('new-posts').textContent(), patience).toBe('↑ 1 new post');
    expect(await texts(reader.page)).toEqual(['already there']);
    await shot(reader.page, 'live-pill');
    await reader.page.getByTestId('new-posts').click();
    await expect.poll(() => texts(reader.page), patience).toEqual(['fresh from the other browser', 'already there']);
    expect(await reader.page.getByTestId('new-posts').isHidden()).toBe(true);

    // Refresh asks only for posts newer than the newest shown: the live one stays once.
    await reader.page.getByTestId('refresh').click();
    await expect.poll(() => reader.page.getByTestId('refresh').textContent(), patience).toBe('Refresh');
    expect(await texts(reader.page)).toEqual(['fresh from the other browser', 'already there']);

    // Refresh with live posts still behind the pill shows them, each once; then a post the live
    // path did not deliver (written while the reader was not listening would be the same).
    await post(writer, 'second live post');
    await expect.poll(() => reader.page.getByTestId('new-posts').textContent(), patience).toBe('↑ 1 new post');
    await reader.page.getByTestId('refresh').click();
    await expect.poll(() => texts(reader.page), patience).toEqual(['second live post', 'fresh from the other browser', 'already there']);
    await reader.page.getByTestId('refresh').click();
    await expect.poll(() => reader.page.getByTestId('refresh').textContent(), patience).toBe('Refresh');
    const after = await texts(reader.page);
    expect(countOf(after, 'second live post')).toBe(1);
    expect(countOf(after, 'fresh from the other browser')).toBe(1);
    expect(await reader.page.getByTestId('count').textContent()).toBe('3 posts');
    expect(await texts(writer.page)).toEqual(['second live post', 'fresh from the other browser', 'already there']);
    await shot(reader.page, 'live-refresh');
    await closeAll(writer, reader);
  });

  it('infinite scroll loads older posts until the end', async () => {
    const [writer, reader] = await Promise.all([person('scroll_writer'), person('scroll_reader')]);
    await follow(reader, writer);
    for (let i = 0; i < 25; i++) await post(writer, `older post ${i}`);
    // A fresh page reads the first page of 20 (live, the 25 would wait behind the pill).
    await reader.page.reload();
    await expect.poll(async () => (await texts(reader.page)).length, patience).toBe(20);
    expect((await texts(reader.page))[0]).toBe('older post 24');
    expect(await reader.page.getByTestId('count').textContent()).toBe('20 posts');
    await reader.page.getByTestId('sentinel').scrollIntoViewIfNeeded();
    await expect.poll(async () => (await texts(reader.page)).length, patience).toBe(25);
    expect((await texts(reader.page)).at(-1)).toBe('older post 0');
    await expect.poll(() => reader.page.getByTestId('sentinel').textContent(), patience).toBe('You’re all caught up.');
    expect(await reader.page.getByTestId('count').textContent()).toBe('25 posts');
    await shot(reader.page, 'infinite-scroll');
    await closeAll(writer, reader);
  });

  it('like, repost and reply show their counts and the viewer’s state', async () => {
    const [writer, reader] = await Promise.all([person('ada', { displayName: 'Ada Lovelace' }), person('grace', { displayName: 'Grace Hopper' })]);
    await follow(reader, writer);
    await follow(writer, reader);
    await post(writer, 'The Analytical Engine weaves algebraic patterns.');
    await reader.page.getByTestId('refresh').click();
    const shown = postWith(reader.page, 'The Analytical Engine weaves algebraic patterns.');
    await shown.waitFor(patience);

    const like = shown.getByTestId('like');
    expect(await like.textContent()).toBe('0');
    await like.click();
    await expect.poll(() => like.textContent(), patience).toBe('1');
    expect(await like.getAttribute('aria-pressed')).toBe('true');
    expect(await like.getAttribute('aria-label')).toBe('Like, 1 like');

    const repost = shown.getByTestId('repost');
    await repost.click();
    await expect.poll(() => repost.textContent(), patience).toBe('1');
    expect(await repost.getAttribute('aria-pressed')).toBe('true');
    // Own posts cannot be reposted by their author.
    expect(await postWith(writer.page, 'The Analytical Engine weaves algebraic patterns.').getByTestId('repost').isDisabled()).toBe(true);
    // The writer sees the reader's like on their post after a refresh of the thread.
    await postWith(writer.page, 'The Analytical Engine weaves algebraic patterns.').getByTestId('open-thread').click();
    await expect.poll(() => writer.page.getByTestId('main-post').getByTestId('like').textContent(), patience).toBe('1');
    expect(await writer.page.getByTestId('main-post').getByTestId('like').getAttribute('aria-pressed')).toBe('false');
    await writer.page.goBack();

    // Reply: opens the thread with the reply box ready.
    await shown.getByTestId('reply').click();
    await reader.page.getByTestId('reply-form').waitFor(patience);
    expect(await reader.page.evaluate(() => (globalThis as any).document.activeElement?.id)).toBe('reply-form-text');
    await reader.page.keyboard.type('Nobody has written a program yet. Let me.');
    await reader.page.getByTestId('reply-form').getByTestId('publish').click();
    await expect.poll(() => reader.page.getByTestId('replies-title').textContent(), patience).toBe('1 reply');
    expect(await reader.page.getByTestId('main-post').getByTestId('reply').textContent()).toBe('1');
    expect(await reader.page.getByTestId('replies').getByTestId('replying-to').textContent()).toBe('replying to @ada');

    // Back home, the counts agree, and the reply says whom it answers.
    await reader.page.getByTestId('back').click();
    const home = postWith(reader.page, 'The Analytical Engine weaves algebraic patterns.').first();
    await expect.poll(() => home.getByTestId('reply').textContent(), patience).toBe('1');
    expect(await home.getByTestId('like').textContent()).toBe('1');
    await expect.poll(async () => (await texts(reader.page)).includes('Nobody has written a program yet. Let me.'), patience).toBe(true);
    expect(await postWith(reader.page, 'Nobody has written a program yet. Let me.').getByTestId('replying-to').textContent()).toBe('replying to @ada');
    // Undo the like: the count goes back.
    await home.getByTestId('like').click();
    await expect.poll(() => home.getByTestId('like').textContent(), patience).toBe('0');
    expect(await home.getByTestId('like').getAttribute('aria-pressed')).toBe('false');
    await home.getByTestId('like').click();
    await expect.poll(() => home.getByTestId('like').textContent(), patience).toBe('1');
    await shot(reader.page, 'like-repost-reply');
    await closeAll(writer, reader);
  });

  it('a thread shows the post, what it replies to, and its replies', async () => {
    const [asker, answerer] = await Promise.all([person('thread_asker'), person('thread_answerer', { displayName: 'Helpful Person' })]);
    const question = await post(asker, 'Which sorting algorithm?');
    for (const text of ['Merge sort', 'Timsort']) {
      await h.app.gql('mutation ($text: String!, $replyTo: ID) { createPost(text: $text, replyTo: $replyTo) { id } }', { text, replyTo: question }, answerer.token);
    }
    await asker.page.getByTestId('refresh').click();
    await postWith(asker.page, 'Which sorting algorithm?').getByTestId('open-thread').click();
    await expect.poll(() => asker.page.getByTestId('replies-title').textContent(), patience).toBe('2 replies');
    expect(await asker.page.getByTestId('main-post').getByTestId('text').textContent()).toBe('Which sorting algorithm?');
    expect(await asker.page.getByTestId('replies').getByTestId('text').allTextContents()).toEqual(['Merge sort', 'Timsort']);
    expect(await asker.page.getByTestId('replies').locator('.name').first().textContent()).toBe('Helpful Person');

    // A reply's own thread shows the post it answers above it.
    await asker.page.getByTestId('replies').getByTestId('post').first().getByTestId('open-thread').click();
    await expect.poll(() => asker.page.getByTestId('parent').getByTestId('text').textContent(), patience).toBe('Which sorting algorithm?');
    expect(await asker.page.getByTestId('main-post').getByTestId('text').textContent()).toBe('Merge sort');
    expect(await asker.page.getByTestId('replies-title').textContent()).toBe('No replies yet');
    await shot(asker.page, 'thread');
    await asker.page.goBack();
    await expect.poll(() => asker.page.getByTestId('main-post').getByTestId('text').textContent(), patience).toBe('Which sorting algorithm?');
    await closeAll(asker, answerer);
  });

  it('delete asks first, Cancel keeps the post, and a confirmed delete leaves both pages', async () => {
    const [writer, reader] = await Promise.all([person('del_writer'), person('del_reader')]);
    await follow(reader, writer);
    await post(writer, 'a post to regret');
    await Promise.all([writer.page.getByTestId('refresh').click(), reader.page.getByTestId('refresh').click()]);
    const mine = postWith(writer.page, 'a post to regret');
    await mine.waitFor(patience);
    await expect.poll(() => texts(reader.page), patience).toEqual(['a post to regret']);
    expect(await postWith(reader.page, 'a post to regret').getByTestId('delete').count()).toBe(0);

    // Delete is a quiet link-style button; the red one only comes with the question.
    const deleteButton = mine.getByTestId('delete');
    expect(await deleteButton.evaluate((button) => (globalThis as any).getComputedStyle(button).backgroundColor)).toBe('rgba(0, 0, 0, 0)');
    await deleteButton.click();
    expect(await mine.locator('.confirm span').textContent()).toBe('Delete this post for everyone?');
    await shot(writer.page, 'delete-confirmation');
    await mine.getByTestId('cancel-delete').click();
    expect(await texts(writer.page)).toEqual(['a post to regret']);
    expect(await mine.getByTestId('delete').isVisible()).toBe(true);

    await mine.getByTestId('delete').click();
    await mine.getByTestId('confirm-delete').click();
    await expect.poll(() => texts(writer.page), patience).toEqual([]);
    await expect.poll(() => texts(reader.page), patience).toEqual([]);
    expect(await writer.page.getByTestId('count').textContent()).toBe('0 posts');
    expect(await reader.page.getByTestId('empty').isVisible()).toBe(true);
    await closeAll(writer, reader);
  });

  it('a profile: counts, follow and unfollow, mute, block', async () => {
    const [star, fan] = await Promise.all([person('star', { displayName: 'Stella Star' }), person('fan')]);
    await post(star, 'hello from the star');
    await fan.page.getByRole('link', { name: 'Search' }).click();
    await fan.page.getByTestId('search-input').fill('@star');
    await fan.page.getByTestId('result').getByRole('link', { name: 'Stella Star' }).click();
    await expect.poll(() => fan.page.getByTestId('profile-name').textContent(), patience).toBe('Stella Star');
    expect(await fan.page.getByTestId('followers').textContent()).toBe('0 followers');
    expect(await fan.page.getByTestId('following').textContent()).toBe('0 following');
    expect(await fan.page.getByTestId('timeline').getByTestId('text').allTextContents()).toEqual(['hello from the star']);

    await fan.page.getByTestId('follow').click();
    await expect.poll(() => fan.page.getByTestId('followers').textContent(), patience).toBe('1 follower');
    expect(await fan.page.getByTestId('unfollow').isVisible()).toBe(true);
    await fan.page.getByRole('link', { name: 'Home' }).click();
    await expect.poll(() => texts(fan.page), patience).toEqual(['hello from the star']);

    // Mute: the posts leave the home timeline; the profile says so.
    await postWith(fan.page, 'hello from the star').locator('.name').click();
    await fan.page.getByTestId('mute').click();
    await fan.page.getByTestId('muted-note').waitFor(patience);
    expect(await fan.page.getByTestId('unmute').isVisible()).toBe(true);
    await fan.page.getByRole('link', { name: 'Home' }).click();
    await expect.poll(() => texts(fan.page), patience).toEqual([]);
    await fan.page.goBack();
    await fan.page.getByTestId('unmute').click();
    await expect.poll(() => fan.page.getByTestId('muted-note').count(), patience).toBe(0);

    // Unfollow, follow again, then block: asks once more, and the follow is gone.
    await fan.page.getByTestId('unfollow').click();
    await expect.poll(() => fan.page.getByTestId('followers').textContent(), patience).toBe('0 followers');
    await fan.page.getByTestId('follow').click();
    await expect.poll(() => fan.page.getByTestId('followers').textContent(), patience).toBe('1 follower');
    await fan.page.getByTestId('block').click();
    expect(await fan.page.getByTestId('block').textContent()).toBe('Block @star? Click again');
    await fan.page.getByTestId('block').click();
    await fan.page.getByTestId('blocked-note').waitFor(patience);
    await expect.poll(() => fan.page.getByTestId('followers').textContent(), patience).toBe('0 followers');
    expect(await fan.page.getByTestId('follow').count()).toBe(0);
    expect(await fan.page.getByTestId('unblock').isVisible()).toBe(true);
    await shot(fan.page, 'profile');
    await fan.page.getByRole('link', { name: 'Home' }).click();
    await expect.poll(() => texts(fan.page), patience).toEqual([]);

    // One's own profile has no buttons to follow oneself.
    await fan.page.getByTestId('my-profile').click();
    await expect.poll(() => fan.page.getByTestId('profile-name').textContent(), patience).toBe('fan');
    expect(await fan.page.getByTestId('profile').getByText('This is you.').isVisible()).toBe(true);
    await closeAll(star, fan);
  });

  it('a keyword filter hides a post until it is removed', async () => {
    const [writer, reader] = await Promise.all([person('filter_writer'), person('filter_reader')]);
    await follow(reader, writer);
    await post(writer, 'the ending has a big SPOILER');
    await post(writer, 'nothing to hide here');
    await reader.page.getByTestId('refresh').click();
    await expect.poll(() => texts(reader.page), patience).toEqual(['nothing to hide here', 'the ending has a big SPOILER']);

    await reader.page.getByRole('link', { name: 'Settings' }).click();
    await reader.page.getByTestId('empty').waitFor(patience);
    expect(await reader.page.getByTestId('empty').textContent()).toBe('No filters yet.');
    await reader.page.getByTestId('filter-phrase').fill('spoiler');
    await reader.page.getByTestId('filter-phrase').press('Enter');
    await expect.poll(() => reader.page.getByTestId('filter').allTextContents(), patience).toEqual(['spoilerRemove']);
    expect(await reader.page.getByTestId('filter-count').textContent()).toBe('1 filter');
    await shot(reader.page, 'keyword-filter');
    await reader.page.getByRole('link', { name: 'Home' }).click();
    await expect.poll(() => texts(reader.page), patience).toEqual(['nothing to hide here']);

    await reader.page.getByRole('link', { name: 'Settings' }).click();
    await reader.page.getByRole('button', { name: 'Remove filter spoiler' }).click();
    await reader.page.getByTestId('empty').waitFor(patience);
    await reader.page.getByRole('link', { name: 'Home' }).click();
    await expect.poll(() => texts(reader.page), patience).toEqual(['nothing to hide here', 'the ending has a big SPOILER']);
    await closeAll(writer, reader);
  });

  it('fits a phone-sized screen (375 px) without sideways scrolling', async () => {
    const [writer, reader] = await Promise.all([person('phone_writer', { displayName: 'Mo Bile' }), person('phone_reader', { viewport: phone })]);
    await follow(reader, writer);
    await post(writer, 'A rather long post to see how text wraps on a small screen: supercalifragilisticexpialidocious_and_an_unbroken_token_that_goes_on');
    await post(writer, 'short one');
    await reader.page.getByTestId('refresh').click();
    await expect.poll(async () => (await texts(reader.page)).length, patience).toBe(2);
    const width = () => layoutWidth(reader.page);
    expect(await width()).toBeLessThanOrEqual(375);
    for (const name of ['Home', 'Profile', 'Settings']) expect(await reader.page.getByRole('link', { name }).isVisible()).toBe(true);
    expect(await reader.page.getByTestId('sign-out').isVisible()).toBe(true);
    await shot(reader.page, 'phone');
    await postWith(reader.page, 'short one').getByTestId('open-thread').click();
    await reader.page.getByTestId('main-post').waitFor(patience);
    expect(await width()).toBeLessThanOrEqual(375);

    // Every page of the navigation, a search with results, and a list with a long name.
    await h.as(reader, 'mutation { createList(name: "A list whose name is long enough to wrap") { id } }');
    const pages: [string, string][] = [['Notifications', 'empty'], ['Bookmarks', 'empty'], ['Profile', 'profile-name'], ['Settings', 'filters'], ['Search', 'empty'], ['Lists', 'list-item']];
    for (const [name, shown] of pages) {
      await reader.page.getByRole('link', { name }).click();
      await reader.page.getByTestId(shown).first().waitFor(patience);
      expect(await width(), name).toBeLessThanOrEqual(375);
    }
    await reader.page.getByTestId('list-item').getByRole('link').click();
    await reader.page.getByTestId('member-handle').waitFor(patience);
    expect(await width()).toBeLessThanOrEqual(375);
    await shot(reader.page, 'phone-list');
    await reader.page.getByRole('link', { name: 'Search' }).click();
    await reader.page.getByTestId('search-input').fill('phone');
    await expect.poll(() => reader.page.getByTestId('result').count(), patience).toBe(2);
    expect(await width()).toBeLessThanOrEqual(375);
    await closeAll(writer, reader);
  });

  // Its screenshot (home-timeline.png) is the one docs/web-client.png shows.
  it('shows a home timeline with display names, counts, a reply, the new-posts pill, who to follow and the unread badge', async () => {
    const [ada, grace, alan] = await Promise.all([
      person('doc_ada', { displayName: 'Ada Lovelace' }),
      person('doc_grace', { displayName: 'Grace Hopper', viewport: { width: 1200, height: 820 } }),
      person('doc_alan', { displayName: 'Alan Turing' }),
    ]);
    await h.app.gql('mutation { signUp(handle: "doc_hedy", password: "correct horse battery", displayName: "Hedy Lamarr") { token } }');
    for (const [reader, author] of [[grace, ada], [grace, alan], [ada, grace], [alan, grace]] as const) await follow(reader, author);
    for (const friend of [ada, alan]) await h.as(friend, 'mutation { follow(handle: "doc_hedy") { id } }');
    const engine = await post(ada, 'The Analytical Engine weaves algebraic patterns just as the Jacquard loom weaves flowers and leaves.');
    await h.app.gql('mutation ($id: ID!) { likePost(id: $id) { id } }', { id: engine }, alan.token);
    const machines = await post(alan, 'Can machines think? I propose to consider the question.');
    await h.app.gql('mutation ($id: ID!) { repost(id: $id) { id } }', { id: engine }, alan.token);
    await h.app.gql('mutation ($text: String!, $replyTo: ID) { createPost(text: $text, replyTo: $replyTo) { id } }', { text: 'They already compile programs. Thinking is next.', replyTo: machines }, grace.token);
    await grace.page.reload();
    await expect.poll(async () => (await texts(grace.page)).includes('They already compile programs. Thinking is next.'), patience).toBe(true);
    await postWith(grace.page, 'Can machines think? I propose to consider the question.').getByTestId('like').click();
    await post(ada, 'A new post arrives live: the pill waits for you.');
    await grace.page.getByTestId('new-posts').waitFor(patience);
    for (const name of ['Ada Lovelace', 'Alan Turing']) expect(await grace.page.getByText(name).first().isVisible()).toBe(true);
    expect(await texts(grace.page)).not.toContain('A new post arrives live: the pill waits for you.');
    // Beside the timeline: whom her follows follow, and the follows she has not seen yet.
    expect(await grace.page.getByTestId('suggestion').locator('.name').allTextContents()).toEqual(['Hedy Lamarr']);
    expect(await grace.page.getByTestId('reason').textContent()).toBe('Followed by Ada Lovelace and Alan Turing');
    await expect.poll(() => grace.page.getByTestId('unread-badge').textContent(), patience).toBe('1');
    await shot(grace.page, 'home-timeline');
    await closeAll(ada, grace, alan);
  });

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
        const page = await (await h.browser.newContext()).newPage();
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
