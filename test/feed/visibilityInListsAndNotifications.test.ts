import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/testApp.js';

/** Followers-only and mentioned-only posts where lists, notifications and bookmarks meet them. */
describe('limited posts in lists, notifications and bookmarks', () => {
  let app: TestApp;
  const tokens: Record<string, string> = {};
  const gql = async (as: string, query: string) => {
    const answer = await app.gql(query, {}, tokens[as]);
    expect(answer.errors).toBeUndefined();
    return answer.data;
  };
  const post = async (as: string, text: string, visibility: string) =>
    (await gql(as, `mutation { createPost(text: "${text}", visibility: ${visibility}) { id } }`)).createPost.id as string;

  beforeAll(async () => {
    app = await startTestApp({ FEED_STRATEGY: 'cache' });
    for (const handle of ['lv_owner', 'lv_member', 'lv_stranger', 'lv_other']) tokens[handle] = await app.signUp(handle);
    for (const followee of ['lv_member', 'lv_stranger']) await gql('lv_owner', `mutation { follow(handle: "${followee}") { handle } }`);
  });
  afterAll(() => app?.stop());

  it('shows a member’s followers-only post and posts addressed to the owner in the owner’s list, and nothing of non-members', async () => {
    const listId = (await gql('lv_owner', 'mutation { createList(name: "close") { id } }')).createList.id;
    await gql('lv_owner', `mutation { addToList(id: "${listId}", handle: "lv_member") { id } }`);
    await post('lv_member', 'for my followers', 'FOLLOWERS');
    await post('lv_member', 'just for @lv_owner', 'MENTIONED');
    await post('lv_member', 'just for @lv_other', 'MENTIONED');
    await post('lv_stranger', 'a non-member to @lv_owner', 'MENTIONED');
    await post('lv_member', 'for everyone', 'PUBLIC');
    const page = await gql('lv_owner', `{ list(id: "${listId}") { timeline(first: 10) { edges { node { text } } } } }`);
    expect(page.list.timeline.edges.map((edge: any) => edge.node.text)).toEqual(['for everyone', 'just for @lv_owner', 'for my followers']);
  });

  it('tells a mentioned account only when it may see the post', async () => {
    await post('lv_member', 'followers-only, mentioning @lv_other who does not follow', 'FOLLOWERS');
    await post('lv_member', 'mentioned-only for @lv_other', 'MENTIONED');
    await app.settled();
    const texts = async () =>
      (await gql('lv_other', '{ notifications(first: 10) { edges { node { kind post { text } } } } }')).notifications.edges.map(
        (edge: any) => `${edge.node.kind} ${edge.node.post?.text}`,
      );
    expect(await texts()).toEqual(['MENTION mentioned-only for @lv_other', 'MENTION just for @lv_other']);
  });

  it('refuses to bookmark a post the viewer may not see, and hides a bookmarked followers-only post after an unfollow', async () => {
    const secret = await post('lv_member', 'mentioned-only for @lv_other, again', 'MENTIONED');
    const refused = await app.gql(`mutation { bookmark(id: "${secret}") { id } }`, {}, tokens.lv_owner);
    expect(refused.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    const forFollowers = await post('lv_member', 'bookmark me, followers', 'FOLLOWERS');
    await gql('lv_owner', `mutation { bookmark(id: "${forFollowers}") { id } }`);
    const bookmarks = async () =>
      (await gql('lv_owner', '{ viewer { bookmarks(first: 10) { edges { node { text } } } } }')).viewer.bookmarks.edges.map((edge: any) => edge.node.text);
    expect(await bookmarks()).toEqual(['bookmark me, followers']);
    await gql('lv_owner', 'mutation { unfollow(handle: "lv_member") { handle } }');
    expect(await bookmarks()).toEqual([]);
  });
});
