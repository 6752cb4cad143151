import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPost, follow } from '../live/liveClient.js';
import { answersAs, startTestApp, type TestApp } from '../support/testApp.js';

/**
 * Every list that pages, paged both ways with `timeline`'s rules: `first`/`after` reads on in the
 * list's order, `last`/`before` returns what lies just before a cursor (or the list's end), and
 * "what is new since I looked" is one `last`/`before` from the first cursor shown.
 */
describe('connections both ways', () => {
  let app: TestApp;
  const tokens: Record<string, string> = {};
  const ok = answersAs(() => app, tokens);
  const fans = ['fan_a', 'fan_b', 'fan_c', 'fan_d', 'fan_e'];
  const page = '{ edges { cursor node { handle } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } }';
  const handles = (connection: { edges: { node: { handle: string } }[] }) => connection.edges.map((edge) => edge.node.handle);
  const texts = (connection: { edges: { node: { text: string } }[] }) => connection.edges.map((edge) => edge.node.text);

  beforeAll(async () => {
    app = await startTestApp();
    tokens.star = await app.signUp('star');
    for (const fan of fans) {
      tokens[fan] = await app.signUp(fan);
      await follow(app, tokens[fan]!, 'star');
      await follow(app, tokens.star!, fan);
    }
  });
  afterAll(() => app?.stop());

  it('followers and following: forwards by handle, and backwards from a cursor or from the end', async () => {
    for (const field of ['followers', 'following']) {
      const first = (await ok('star', `{ viewer { ${field}(first: 2) ${page} } }`)).viewer[field];
      expect(handles(first)).toEqual(['fan_a', 'fan_b']);
      const second = (await ok('star', `query($after: String) { viewer { ${field}(first: 2, after: $after) ${page} } }`, { after: first.pageInfo.endCursor })).viewer[field];
      expect(handles(second)).toEqual(['fan_c', 'fan_d']);
      const back = (await ok('star', `query($before: String) { viewer { ${field}(last: 2, before: $before) ${page} } }`, { before: second.pageInfo.startCursor })).viewer[field];
      expect(handles(back)).toEqual(['fan_a', 'fan_b']);
      expect(back.pageInfo).toMatchObject({ hasPreviousPage: false, hasNextPage: true });
      const end = (await ok('star', `{ viewer { ${field}(last: 2) ${page} } }`)).viewer[field];
      expect(handles(end)).toEqual(['fan_d', 'fan_e']);
      expect(end.pageInfo).toMatchObject({ hasPreviousPage: true, hasNextPage: false });
    }
  });

  it('list members: the same both ways', async () => {
    const list = (await ok('star', 'mutation { createList(name: "Fans") { id } }')).createList.id;
    for (const fan of fans) await ok('star', 'mutation($id: ID!, $h: String!) { addToList(id: $id, handle: $h) { id } }', { id: list, h: fan });
    const end = (await ok('star', `query($id: ID!) { list(id: $id) { members(last: 3) ${page} } }`, { id: list })).list.members;
    expect(handles(end)).toEqual(['fan_c', 'fan_d', 'fan_e']);
    const before = (await ok('star', `query($id: ID!, $c: String) { list(id: $id) { members(last: 3, before: $c) ${page} } }`, { id: list, c: end.pageInfo.startCursor })).list.members;
    expect(handles(before)).toEqual(['fan_a', 'fan_b']);
    expect(before.pageInfo.hasPreviousPage).toBe(false);
  });

  it('bookmarks: what was bookmarked since the first page is the page before its first cursor', async () => {
    const posts = [];
    for (const text of ['kept one', 'kept two', 'kept three']) posts.push((await createPost(app, tokens.fan_a!, text)).id);
    for (const id of posts) await ok('star', 'mutation($id: ID!) { bookmark(id: $id) { id } }', { id });
    const bookmarks = '{ edges { cursor node { text } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } }';
    const first = (await ok('star', `{ viewer { bookmarks(first: 2) ${bookmarks} } }`)).viewer.bookmarks;
    expect(texts(first)).toEqual(['kept three', 'kept two']);
    const later = (await createPost(app, tokens.fan_b!, 'kept later')).id;
    await ok('star', 'mutation($id: ID!) { bookmark(id: $id) { id } }', { id: later });
    const newer = (await ok('star', `query($c: String) { viewer { bookmarks(last: 10, before: $c) ${bookmarks} } }`, { c: first.pageInfo.startCursor })).viewer.bookmarks;
    expect(texts(newer)).toEqual(['kept later']);
    expect(newer.pageInfo.hasPreviousPage).toBe(false);
  });

  it('replies: oldest first forwards, and the newest replies from the end', async () => {
    const parent = (await createPost(app, tokens.star!, 'ask me anything')).id;
    for (const fan of fans) await ok(fan, 'mutation($id: ID!, $t: String!) { createPost(text: $t, replyTo: $id) { id } }', { id: parent, t: `answer from ${fan}` });
    const replies = '{ edges { cursor node { text } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } }';
    const first = (await ok('star', `query($id: ID!) { post(id: $id) { replies(first: 2) ${replies} } }`, { id: parent })).post.replies;
    expect(texts(first)).toEqual(['answer from fan_a', 'answer from fan_b']);
    const last = (await ok('star', `query($id: ID!) { post(id: $id) { replies(last: 2) ${replies} } }`, { id: parent })).post.replies;
    expect(texts(last)).toEqual(['answer from fan_d', 'answer from fan_e']);
    const between = (await ok('star', `query($id: ID!, $c: String) { post(id: $id) { replies(last: 2, before: $c) ${replies} } }`, { id: parent, c: last.pageInfo.startCursor })).post.replies;
    expect(texts(between)).toEqual(['answer from fan_b', 'answer from fan_c']);
  });

  it('notifications: what came since the first page is the page before its first cursor', async () => {
    const notifications = '{ edges { cursor node { kind actors(first: 1) { handle } } } pageInfo { hasPreviousPage startCursor } }';
    const first = (await ok('star', `{ notifications(first: 3) ${notifications} }`)).notifications;
    expect(first.edges.length).toBeGreaterThan(0);
    const post = (await createPost(app, tokens.star!, 'mention bait')).id;
    await ok('fan_c', 'mutation($id: ID!) { repost(id: $id) { id } }', { id: post });
    const newer = (await ok('star', `query($c: String) { notifications(last: 10, before: $c) ${notifications} }`, { c: first.pageInfo.startCursor })).notifications;
    expect(newer.edges.map((edge: any) => [edge.node.kind, edge.node.actors[0].handle])).toEqual([['REPOST', 'fan_c']]);
    expect(newer.pageInfo.hasPreviousPage).toBe(false);
  });

  it('refuses first with last on every connection, as on the timeline', async () => {
    const result = await app.gql('{ viewer { followers(first: 1, last: 1) { totalCount } } }', {}, tokens.star);
    expect(result.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  });
});
