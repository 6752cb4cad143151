import { describe, expect, it } from 'vitest';
import { closeAll, patience, shot, texts, useWebClient, type Person } from './webClientHarness.js';

/**
 * The reference web client in Chromium, the journeys about people: finding them, one's own
 * profile and account, who to follow, and lists of them. What a person sees is asserted, as in
 * webClient.e2e.
 */
describe('the reference web client in Chromium: people and accounts', { timeout: 60_000 }, () => {
  const h = useWebClient();
  const { person, post, follow } = h;
  const signUp = (handle: string, displayName: string) =>
    h.app.gql('mutation ($handle: String!, $displayName: String) { signUp(handle: $handle, password: "correct horse battery", displayName: $displayName) { token } }', {
      handle,
      displayName,
    });

  it('people search finds handles and names by their start, says when no one is found, and refuses a query too long at the box', async () => {
    await Promise.all([signUp('marie_c', 'Marie Curie'), signUp('mario', 'Super Mario'), signUp('pierre_c', 'Pierre Curie')]);
    const seeker = await person('seeker');
    const { page } = seeker;
    await page.getByRole('link', { name: 'Search' }).click();
    await page.getByTestId('results').getByTestId('empty').waitFor(patience);
    expect(await page.getByTestId('results').textContent()).toBe('Type the start of a handle or a name to find people.');

    // The button is disabled while a search is on its way (held back here to see it).
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    await page.route(h.app.url, async (route) => {
      if (route.request().postData()?.includes('SearchUsers')) await held;
      await route.continue();
    });
    await page.getByTestId('search-input').fill('MAR');
    await expect.poll(() => page.getByTestId('search-button').isDisabled(), patience).toBe(true);
    release();
    await expect.poll(() => page.getByTestId('result').locator('.name').allTextContents(), patience).toEqual(['Marie Curie', 'Super Mario']);
    expect(await page.getByTestId('result-count').textContent()).toBe('2 people found');
    expect(await page.getByTestId('search-button').isEnabled()).toBe(true);
    await page.unroute(h.app.url);

    // A display name's start finds its account too; a leading @ is a handle's.
    await page.getByTestId('search-input').fill('super');
    await expect.poll(() => page.getByTestId('result').locator('.handle').allTextContents(), patience).toEqual(['@mario']);
    await page.getByTestId('search-input').fill('@pierre');
    await expect.poll(() => page.getByTestId('result').locator('.name').allTextContents(), patience).toEqual(['Pierre Curie']);

    await page.getByTestId('search-input').fill('zzz');
    await expect.poll(() => page.getByTestId('results').textContent(), patience).toBe(
      'No one found for “zzz”. Search matches the start of a handle or a display name.',
    );

    // The API refuses a query over 100 characters (BAD_USER_INPUT): said at the box, not as a failure.
    await page.getByTestId('search-input').fill('a'.repeat(101));
    await page.getByTestId('search-input').press('Enter');
    await expect.poll(() => page.getByTestId('search-error').textContent(), patience).toBe('Can’t search for that: query must be at most 100 characters.');
    expect(await page.getByTestId('search-input').getAttribute('aria-invalid')).toBe('true');
    expect(await page.getByTestId('results').textContent()).toBe('');

    // The search is in the address, and a result opens the profile.
    await page.getByTestId('search-input').fill('marie');
    await expect.poll(() => page.getByTestId('result').count(), patience).toBe(1);
    expect(await page.getByTestId('search-error').textContent()).toBe('');
    expect(page.url()).toMatch(/#\/search\/marie$/);
    await shot(page, 'search');
    await page.getByTestId('result').getByRole('link', { name: 'Marie Curie' }).click();
    await expect.poll(() => page.getByTestId('profile-name').textContent(), patience).toBe('Marie Curie');
    await closeAll(seeker);
  });

  it('profile settings: display name and bio with errors at their fields; the bio shows on the profile', async () => {
    const [me, visitor] = await Promise.all([person('bio_writer', { displayName: 'Bea Writer' }), person('bio_reader')]);
    const { page } = me;
    await page.getByRole('link', { name: 'Settings' }).click();
    await expect.poll(() => page.getByTestId('display-name').inputValue(), patience).toBe('Bea Writer');
    expect(await page.getByTestId('bio-input').inputValue()).toBe('');

    await page.getByTestId('display-name').fill('B'.repeat(51));
    await page.getByTestId('bio-input').fill('x'.repeat(301));
    expect(await page.getByTestId('bio-counter').textContent()).toBe('301/300');
    await page.getByTestId('save-profile').click();
    await expect.poll(() => page.getByTestId('displayName-error').textContent(), patience).toBe('Display name must be at most 50 characters');
    expect(await page.getByTestId('display-name').getAttribute('aria-invalid')).toBe('true');
    await page.getByTestId('display-name').fill('Bea Q. Writer');
    await page.getByTestId('save-profile').click();
    await expect.poll(() => page.getByTestId('bio-error').textContent(), patience).toBe('Bio must be at most 300 characters');
    expect(await page.getByTestId('displayName-error').textContent()).toBe('');

    await page.getByTestId('bio-input').fill('Writes about compilers.\nDrinks tea.');
    await page.getByTestId('save-profile').click();
    await expect.poll(() => page.getByTestId('profile-status').textContent(), patience).toBe('Saved.');
    expect(await page.getByTestId('bio-error').textContent()).toBe('');
    // The navigation's chip follows the new name at once.
    expect(await page.getByTestId('me').locator('.avatar').textContent()).toBe('BQ');
    await shot(page, 'profile-settings');

    await page.getByTestId('my-profile').click();
    await expect.poll(() => page.getByTestId('bio').textContent(), patience).toBe('Writes about compilers.\nDrinks tea.');
    expect(await page.getByTestId('profile-name').textContent()).toBe('Bea Q. Writer');
    await visitor.page.goto(`${h.web.url}#/u/bio_writer`);
    await expect.poll(() => visitor.page.getByTestId('bio').textContent(), patience).toBe('Writes about compilers.\nDrinks tea.');

    // A blank bio clears it.
    await page.getByRole('link', { name: 'Settings' }).click();
    await expect.poll(() => page.getByTestId('bio-input').inputValue(), patience).toBe('Writes about compilers.\nDrinks tea.');
    await page.getByTestId('bio-input').fill('  ');
    await page.getByTestId('save-profile').click();
    await expect.poll(() => page.getByTestId('profile-status').textContent(), patience).toBe('Saved.');
    await page.getByTestId('my-profile').click();
    await page.getByTestId('profile-name').waitFor(patience);
    expect(await page.getByTestId('bio').count()).toBe(0);
    await closeAll(me, visitor);
  });

  it('who to follow names the followed who follow them, and Follow brings their posts home', async () => {
    const [viewer, first, second, star, other] = await Promise.all([
      person('wtf_viewer'),
      person('wtf_first', { displayName: 'Fay First' }),
      person('wtf_second', { displayName: 'Sid Second' }),
      person('wtf_star', { displayName: 'Stan Star' }),
      person('wtf_other', { displayName: 'Olga Other' }),
    ]);
    await Promise.all([follow(viewer, first), follow(viewer, second), follow(first, star), follow(second, star), follow(first, other)]);
    await post(star, 'hello from the star');
    await viewer.page.reload();
    const box = viewer.page.getByTestId('suggestions');
    await expect.poll(() => box.getByTestId('suggestion').locator('.name').allTextContents(), patience).toEqual(['Stan Star', 'Olga Other']);
    expect(await box.getByTestId('reason').allTextContents()).toEqual(['Followed by Fay First and Sid Second', 'Followed by Fay First']);
    expect(await box.getByRole('heading').textContent()).toBe('Who to follow');
    expect(await texts(viewer.page)).toEqual([]);

    const followStar = box.getByRole('button', { name: 'Follow @wtf_star' });
    await followStar.click();
    await expect.poll(() => followStar.textContent(), patience).toBe('Following');
    expect(await followStar.isDisabled()).toBe(true);
    await expect.poll(() => texts(viewer.page), patience).toEqual(['hello from the star']);
    expect(await box.getByRole('button', { name: 'Follow @wtf_other' }).isEnabled()).toBe(true);
    await shot(viewer.page, 'who-to-follow');
    await closeAll(viewer, first, second, star, other);
  });

  it('lists: create one, add members from its page and from a profile, read its timeline live, rename, remove, delete', async () => {
    const [owner, alice, bob, carol] = await Promise.all([
      person('list_owner'),
      person('list_alice', { displayName: 'Alice Ames' }),
      person('list_bob', { displayName: 'Bob Burns' }),
      person('list_carol'),
    ]);
    await Promise.all([follow(owner, alice), follow(owner, bob)]);
    await post(alice, 'alice writes');
    await post(bob, 'bob writes');
    const { page } = owner;

    await page.getByRole('link', { name: 'Lists' }).click();
    await expect.poll(() => page.getByTestId('lists').textContent(), patience).toBe('No lists yet. Name one above, then add people you follow to it.');
    await page.getByTestId('create-list').click();
    expect(await page.getByTestId('list-error').textContent()).toBe('Give the list a name.');
    await page.getByTestId('list-name').fill('Friends');
    await page.getByTestId('create-list').click();
    await expect.poll(() => page.getByTestId('list-title').textContent(), patience).toBe('Friends');
    expect(await page.getByTestId('member-count').textContent()).toBe('0 members');
    expect(await page.getByTestId('status').textContent()).toBe('No one is on this list yet. Add people you follow under Members.');

    // Only accounts one follows: the page says so instead of failing.
    await page.getByTestId('member-handle').fill('@list_carol');
    await page.getByTestId('add-member').click();
    await expect.poll(() => page.getByTestId('member-error').textContent(), patience).toBe('You don’t follow @list_carol. Follow them first, then add them.');
    await page.getByTestId('member-handle').fill('list_alice');
    await page.getByTestId('add-member').click();
    await expect.poll(() => page.getByTestId('member').locator('.name').allTextContents(), patience).toEqual(['Alice Ames']);
    await expect.poll(() => page.getByTestId('member-count').textContent(), patience).toBe('1 member');
    await expect.poll(() => texts(page), patience).toEqual(['alice writes']);

    // From Bob's profile: the list to add him to.
    await page.goto(`${h.web.url}#/u/list_bob`);
    await page.getByTestId('add-to-list').waitFor(patience);
    expect(await page.getByTestId('list-choice').locator('option').allTextContents()).toEqual(['Friends']);
    await page.getByTestId('add-to-list-button').click();
    await expect.poll(() => page.getByTestId('list-status').textContent(), patience).toBe('Added to Friends.');
    await page.goBack();
    await expect.poll(() => page.getByTestId('member-count').textContent(), patience).toBe('2 members');
    await expect.poll(() => texts(page), patience).toEqual(['bob writes', 'alice writes']);

    // A member's new post waits behind the pill, as on the home timeline.
    await post(alice, 'alice, live');
    await expect.poll(() => page.getByTestId('new-posts').textContent(), patience).toBe('↑ 1 new post');
    await page.getByTestId('new-posts').click();
    await expect.poll(() => texts(page), patience).toEqual(['alice, live', 'bob writes', 'alice writes']);

    await page.getByTestId('rename-list').click();
    await page.getByTestId('rename-input').fill('Close friends');
    await page.getByTestId('rename-input').press('Enter');
    await expect.poll(() => page.getByTestId('list-title').textContent(), patience).toBe('Close friends');
    await page.getByTestId('members-toggle').click();
    await page.getByRole('button', { name: 'Remove @list_bob from this list' }).click();
    await expect.poll(() => page.getByTestId('member-count').textContent(), patience).toBe('1 member');
    await expect.poll(() => texts(page), patience).toEqual(['alice, live', 'alice writes']);
    await shot(page, 'list');

    await page.getByTestId('delete-list').click();
    expect(await page.getByTestId('delete-list').textContent()).toBe('Delete this list? Click again');
    await page.getByTestId('delete-list').click();
    await expect.poll(() => page.getByTestId('lists').textContent(), patience).toBe('No lists yet. Name one above, then add people you follow to it.');
    await closeAll(owner, alice, bob, carol);
  });

  it('a new password keeps this device signed in and signs the others out; logging out everywhere signs out here too', async () => {
    const me = await person('pw_owner');
    /** The same account signed in on a second device. */
    const signIn = async (password: string): Promise<Pick<Person, 'page' | 'context'>> => {
      const { context, page } = await h.open();
      await page.goto(h.web.url);
      await page.getByLabel('Handle').fill('pw_owner');
      await page.getByLabel('Password').fill(password);
      await page.getByTestId('submit').click();
      await page.getByTestId('me').waitFor(patience);
      return { context, page };
    };
    const other = await signIn('correct horse battery');
    const { page } = me;
    await page.getByRole('link', { name: 'Settings' }).click();
    const form = page.getByTestId('password-form');

    await form.getByLabel('Current password').fill('not my password');
    await form.getByLabel('New password').fill('short');
    await form.getByTestId('change-password').click();
    expect(await page.getByTestId('new-error').textContent()).toBe('Too short: at least 8 characters (you have 5).');
    await form.getByLabel('New password').fill('a brand new secret');
    await form.getByTestId('change-password').click();
    await expect.poll(() => page.getByTestId('current-error').textContent(), patience).toBe('That is not your current password.');
    expect(await form.getByLabel('Current password').getAttribute('aria-invalid')).toBe('true');

    await form.getByLabel('Current password').fill('correct horse battery');
    await form.getByTestId('change-password').click();
    await expect.poll(() => page.getByTestId('flash').textContent(), patience).toBe('Password changed. Your other devices are signed out.');
    await shot(page, 'password-changed');
    // The other device is told at once (its live connection is closed), and the old password is gone.
    await other.page.getByTestId('sign-in').waitFor(patience);
    expect(await other.page.getByTestId('notice').textContent()).toBe('Your session has ended. Sign in again to continue.');
    await other.context.close();
    // This one carries on with the new token.
    await page.getByRole('link', { name: 'Home' }).click();
    await page.getByTestId('new-post').getByTestId('compose').fill('still signed in');
    await page.getByTestId('new-post').getByTestId('publish').click();
    await expect.poll(() => texts(page), patience).toEqual(['still signed in']);

    const again = await signIn('a brand new secret');
    await page.getByRole('link', { name: 'Settings' }).click();
    const everywhere = page.getByTestId('log-out-everywhere');
    await everywhere.click();
    expect(await everywhere.textContent()).toBe('Sign out every device? Click again');
    await everywhere.click();
    await page.getByTestId('sign-in').waitFor(patience);
    expect(await page.getByTestId('notice').textContent()).toBe('You are signed out on every device.');
    await again.page.getByTestId('sign-in').waitFor(patience);
    expect(await again.page.getByTestId('notice').textContent()).toBe('Your session has ended. Sign in again to continue.');
    await closeAll(me, again);
  });
});
