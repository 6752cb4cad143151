import { describe, expect, it } from 'vitest';
import { closeAll, patience, shot, useWebClient } from './webClientHarness.js';

/**
 * The reference web client in Chromium, the journeys of locked accounts, reports and staff: the
 * lock switch, "Requested", the requests page, reporting a post and a profile, and the staff page
 * acting on a report. What a person sees is asserted, as in webClient.e2e.
 */
describe('the reference web client in Chromium: locked accounts and moderation', { timeout: 90_000 }, () => {
  const h = useWebClient({ STAFF_HANDLES: 'warden' });
  const { person } = h;

  it('locks an account, follows it as a request, and approves the request from the requests page', async () => {
    const lola = await person('lola');
    await lola.page.getByRole('link', { name: 'Settings' }).click();
    await lola.page.getByTestId('lock-switch').check();
    await expect.poll(() => lola.page.getByTestId('lock-status').textContent(), patience).toBe('Your account is locked: you approve new followers.');

    const fred = await person('fred');
    await fred.page.goto(`${h.web.url}#/u/lola`);
    await fred.page.getByTestId('follow').click();
    await fred.page.getByTestId('requested').waitFor(patience);
    expect(await fred.page.getByTestId('requested').textContent()).toBe('Requested');
    expect(await fred.page.getByTestId('followers').textContent()).toBe('0 followers');

    await lola.page.goto(`${h.web.url}#/requests`);
    await expect.poll(() => lola.page.getByTestId('request').getAttribute('data-handle'), patience).toBe('fred');
    await lola.page.getByTestId('approve').click();
    await expect.poll(() => lola.page.getByTestId('requests').textContent(), patience).toBe('No one is waiting for your approval.');
    await shot(lola.page, 'moderation-requests');

    await fred.page.reload();
    await fred.page.getByTestId('unfollow').waitFor(patience);
    expect(await fred.page.getByTestId('followers').textContent()).toBe('1 follower');
    await closeAll(lola, fred);
  });

  it('reports a post and a profile, and staff remove the post from the staff page; others are told it is staff only', async () => {
    const troll = await person('troll');
    const post = await h.post(troll, 'a post against the rules');
    const rita = await person('rita');
    await rita.page.goto(`${h.web.url}#/p/${encodeURIComponent(post)}`);
    await rita.page.getByTestId('report-reason').selectOption('ABUSE');
    await rita.page.getByTestId('report-comment').fill('insults');
    await rita.page.getByTestId('report-button').click();
    await expect.poll(() => rita.page.getByTestId('report-status').textContent(), patience).toBe('Reported. Thank you: staff will look at it.');
    await rita.page.goto(`${h.web.url}#/u/troll`);
    await rita.page.getByTestId('report-button').click();
    await expect.poll(() => rita.page.getByTestId('report-status').textContent(), patience).toBe('Reported. Thank you: staff will look at it.');
    await rita.page.goto(`${h.web.url}#/staff`);
    await expect.poll(() => rita.page.getByTestId('reports').textContent(), patience).toBe('Only staff can see reports.');

    const warden = await person('warden');
    await warden.page.goto(`${h.web.url}#/staff`);
    await expect.poll(() => warden.page.getByTestId('report').count(), patience).toBe(2);
    const first = warden.page.getByTestId('report').first();
    expect(await first.getByTestId('report-post').textContent()).toBe('a post against the rules');
    expect(await first.getByTestId('report-comment').textContent()).toBe('insults');
    await shot(warden.page, 'moderation-staff');
    // Removing asks twice.
    await first.getByTestId('remove-post').click();
    await first.getByTestId('remove-post').click();
    await expect.poll(() => warden.page.getByTestId('report').count(), patience).toBe(1);
    await warden.page.getByTestId('report').first().getByTestId('dismiss').click();
    await expect.poll(() => warden.page.getByTestId('reports').textContent(), patience).toBe('No open reports.');

    await troll.page.goto(`${h.web.url}#/p/${encodeURIComponent(post)}`);
    await expect.poll(() => troll.page.getByTestId('thread').textContent(), patience).toContain('does not exist or was deleted');
    await troll.page.getByRole('link', { name: 'Notifications' }).click();
    await expect.poll(() => troll.page.getByTestId('notification-text').allTextContents(), patience).toContain('Staff removed one of your posts for breaking the rules');
    await closeAll(troll, rita, warden);
  });
});
