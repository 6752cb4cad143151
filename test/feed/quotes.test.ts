import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { feedStrategies, timelineContentModes } from '../../src/config.js';
import { follow } from '../live/liveClient.js';
import { requestCommands, startTestApp, type TestApp } from '../support/testApp.js';

const combinations = feedStrategies.flatMap((strategy) => timelineContentModes.map((content) => ({ strategy, content })));

async function create(app: TestApp, token: string, text: string, extra: Record<string, unknown> = {}): Promise<string> {
  const answer = await app.gql(
    'mutation($text: String!, $quoteOf: ID, $visibility: Visibility, $replyTo: ID) { createPost(text: $text, quoteOf: $quoteOf, visibility: $visibility, replyTo: $replyTo) { id } }',
    { text, ...extra },
    token,
  );
  expect(answer.errors).toBeUndefined();
  return answer.data.createPost.id;
}

const quoteCode = async (app: TestApp, token: string, quoteOf: string) =>
  (await app.gql('mutation($q: ID!) { createPost(text: "look", quoteOf: $q) { id } }', { q: quoteOf }, token)).errors?.[0]?.extensions?.code;

describe.each(combinations)('quotes in timelines: FEED_STRATEGY=$strategy TIMELINE_CONTENT=$content', ({ strategy, content }) => {
  let app: TestApp;
  const tokens: Record<string, string> = {};

  beforeAll(async () => {
    app = await startTestApp({ FEED_STRATEGY: strategy, TIMELINE_CONTENT: content });
    for (const handle of ['ada', 'bea', 'cal']) tokens[handle] = await app.signUp(handle);
    await follow(app, tokens.cal!, 'bea');
  });
  afterAll(() => app?.stop());

  it('show the quoted post one level deep, as it is now, with its current text and counts', async () => {
    const original = await create(app, tokens.ada!, 'an original thought');
    const quotes: string[] = [];
    for (let index = 0; index < 3; index++) quotes.push(await create(app, tokens.bea!, `quoting it ${index}`, { quoteOf: original }));
    await app.settled();
    await app.gql('mutation($id: ID!) { editPost(id: $id, text: "an edited thought") { id } }', { id: original }, tokens.ada);
    await app.gql('mutation($id: ID!) { likePost(id: $id) { id } }', { id: original }, tokens.cal);
    await app.settled();
    const query = '{ timeline(first: 10) { edges { node { id text quoted { id text likeCount quoteCount quoted { id } } } } } }';
    const page = await app.gql(query, {}, tokens.cal);
    expect(page.errors).toBeUndefined();
    const shown = page.data.timeline.edges.filter((edge: any) => quotes.includes(edge.node.id));
    expect(shown).toHaveLength(3);
    for (const edge of shown) expect(edge.node.quoted).toEqual({ id: original, text: 'an edited thought', likeCount: 1, quoteCount: 3, quoted: null });

    // The quoted posts of a page: one query for all of them (a DataLoader), none more per quote.
    const commands = await app.commandsDuring(() => app.gql('{ timeline(first: 10) { edges { node { id quoted { id text } } } } }', {}, tokens.cal));
    const contentFinds = requestCommands(commands).filter((command) => command.commandName === 'find' && command.command.find === 'content');
    expect(contentFinds.length).toBeLessThanOrEqual(content === 'link' ? 2 : 1);

    // An edit of the quoted post is taken in place by what this process holds: the next page
    // shows the new text and reads nothing for it.
    const cardQuery = '{ timeline(first: 10) { edges { node { id likeCount quoted { id text likeCount } } } } }';
    await app.warmCommandsDuring(() => app.gql(cardQuery, {}, tokens.cal), ['content']);
    await app.gql('mutation($id: ID!) { editPost(id: $id, text: "a twice edited thought") { id } }', { id: original }, tokens.ada);
    await app.settled();
    let afterEdit: any;
    const afterEditCommands = await app.commandsDuring(async () => (afterEdit = await app.gql(cardQuery, {}, tokens.cal)));
    const cards = afterEdit.data.timeline.edges.filter((edge: any) => quotes.includes(edge.node.id));
    expect(cards.map((edge: any) => edge.node.quoted.text)).toEqual(quotes.map(() => 'a twice edited thought'));
    expect(requestCommands(afterEditCommands).filter((command) => command.command.find === 'content')).toEqual([]);

    // The page people load, on instances that hold nothing yet: with embedded entries the quoted
    // posts and their counts come with the page's counts, at no query of their own; linked
    // entries add one query for all of them.
    const fullPage = (withQuoted: boolean) =>
      `{ timeline(first: 10) { edges { node { id text likeCount repostCount replyCount viewerHasLiked ${withQuoted ? 'quoted { id text likeCount quoteCount author { handle } }' : ''} } } } }`;
    const coldContentFinds = async (query: string) => {
      const cold = await startTestApp({ FEED_STRATEGY: strategy, TIMELINE_CONTENT: content, MONGODB_URI: app.mongodbUri });
      try {
        let answer: any;
        const commands = await cold.commandsDuring(async () => (answer = await cold.gql(query, {}, tokens.cal)));
        expect(answer.errors).toBeUndefined();
        return { answer, finds: requestCommands(commands).filter((command) => command.command.find === 'content').length };
      } finally {
        await cold.stop();
      }
    };
    const [without, withQuoted] = [await coldContentFinds(fullPage(false)), await coldContentFinds(fullPage(true))];
    const quotedCards = withQuoted.answer.data.timeline.edges.filter((edge: any) => quotes.includes(edge.node.id)).map((edge: any) => edge.node.quoted);
    expect(quotedCards).toEqual(quotes.map(() => ({ id: original, text: 'a twice edited thought', likeCount: 1, quoteCount: 3, author: { handle: 'ada' } })));
    if (content === 'embed') expect(withQuoted.finds).toBe(without.finds);
    else expect(withQuoted.finds - without.finds).toBeLessThanOrEqual(1);
    // Once this process holds the quoted posts (every instance forgets them on an edit), an embedded page reads none.
    if (content === 'embed') {
      const warm = await app.warmCommandsDuring(() => app.gql('{ timeline(first: 10) { edges { node { id quoted { id text } } } } }', {}, tokens.cal), ['content']);
      expect(requestCommands(warm).filter((command) => command.command.find === 'content')).toEqual([]);
    }
  });
});

describe('quote rules', () => {
  let app: TestApp;
  const tokens: Record<string, string> = {};

  beforeAll(async () => {
    app = await startTestApp();
    for (const handle of ['ada', 'bea', 'cal', 'dan']) tokens[handle] = await app.signUp(handle);
    await follow(app, tokens.bea!, 'ada');
  });
  afterAll(() => app?.stop());

  it('only public posts can be quoted; one the viewer may not see is NOT_FOUND', async () => {
    const followersOnly = await create(app, tokens.ada!, 'for followers', { visibility: 'FOLLOWERS' });
    expect(await quoteCode(app, tokens.bea!, followersOnly)).toBe('FORBIDDEN');
    expect(await quoteCode(app, tokens.cal!, followersOnly)).toBe('NOT_FOUND');
    expect(await quoteCode(app, tokens.cal!, 'UG9zdDo2NTAwMDAwMDAwMDAwMDAwMDAwMDAwMDA')).toMatch(/NOT_FOUND|BAD_USER_INPUT/);
  });

  it('is FORBIDDEN across a block, either way, and leaves nothing behind', async () => {
    const post = await create(app, tokens.dan!, 'dan speaks');
    await app.gql('mutation { block(handle: "cal") { handle } }', {}, tokens.dan);
    expect(await quoteCode(app, tokens.cal!, post)).toBe('FORBIDDEN');
    const own = await create(app, tokens.cal!, 'cal speaks');
    expect(await quoteCode(app, tokens.dan!, own)).toBe('FORBIDDEN');
    await app.settled();
    const counted = await app.gql('query($id: ID!) { post(id: $id) { quoteCount quotes { edges { node { id } } } } }', { id: post }, tokens.dan);
    expect(counted.data.post).toEqual({ quoteCount: 0, quotes: { edges: [] } });
  });

  it('tells the quoted author once (never grouped); a quote of oneself tells nobody', async () => {
    const post = await create(app, tokens.ada!, 'quotable');
    await create(app, tokens.bea!, 'first quote', { quoteOf: post });
    await create(app, tokens.cal!, 'second quote', { quoteOf: post });
    await create(app, tokens.ada!, 'self quote', { quoteOf: post });
    await app.settled();
    const notes = await app.gql('{ notifications(kinds: [QUOTE]) { edges { node { kind actorCount post { id quoted { id } } } } } }', {}, tokens.ada);
    expect(notes.errors).toBeUndefined();
    expect(notes.data.notifications.edges.map((edge: any) => edge.node.actorCount)).toEqual([1, 1]);
    for (const edge of notes.data.notifications.edges) expect(edge.node.post.quoted.id).toBe(post);
  });

  it('counts public quotes exactly, lists them newest first, and survives deletions either side', async () => {
    const post = await create(app, tokens.ada!, 'counted');
    const quotes = await Promise.all(['bea', 'cal', 'dan'].map((handle) => create(app, tokens[handle]!, `quote by ${handle}`, { quoteOf: post })));
    await create(app, tokens.bea!, 'a limited quote', { quoteOf: post, visibility: 'FOLLOWERS' });
    const read = async (token: string) =>
      (await app.gql('query($id: ID!) { post(id: $id) { quoteCount quotes(first: 2) { edges { node { id } } pageInfo { hasNextPage endCursor } } } }', { id: post }, token)).data.post;
    const first = await read(tokens.ada!);
    expect(first.quoteCount).toBe(3);
    const newestFirst = [...quotes].sort().reverse();
    expect(first.quotes.edges.map((edge: any) => edge.node.id)).toHaveLength(2);
    const next = await app.gql('query($id: ID!, $after: String) { post(id: $id) { quotes(first: 2, after: $after) { edges { node { id } } pageInfo { hasNextPage } } } }', { id: post, after: first.quotes.pageInfo.endCursor }, tokens.ada);
    const all = [...first.quotes.edges, ...next.data.post.quotes.edges].map((edge: any) => edge.node.id);
    expect(new Set(all)).toEqual(new Set(newestFirst));
    expect(next.data.post.quotes.pageInfo.hasNextPage).toBe(false);

    // Deleting a quote, even twice at once, lowers the count exactly once.
    const answers = await Promise.all([0, 1].map(() => app.gql('mutation($id: ID!) { deletePost(id: $id) }', { id: quotes[0] }, tokens.bea)));
    expect(answers.filter((answer) => answer.data?.deletePost === true)).toHaveLength(1);
    expect((await read(tokens.ada!)).quoteCount).toBe(2);

    // Deleting the quoted post leaves the quotes, with `quoted: null`.
    await app.gql('mutation($id: ID!) { deletePost(id: $id) }', { id: post }, tokens.ada);
    const orphan = await app.gql('query($id: ID!) { post(id: $id) { text quoted { id } } }', { id: quotes[1] }, tokens.cal);
    expect(orphan.data.post).toEqual({ text: 'quote by cal', quoted: null });
    // On a page too; and once a page found it gone, the next pages ask nothing for it.
    const page = '{ user(handle: "cal") { posts(first: 5) { edges { node { id likeCount quoted { id likeCount } } } } } }';
    const shown = await app.gql(page, {}, tokens.ada);
    expect(shown.data.user.posts.edges.find((edge: any) => edge.node.id === quotes[1]).node.quoted).toBeNull();
    const again = await app.warmCommandsDuring(() => app.gql(page, {}, tokens.ada), ['content']);
    expect(requestCommands(again).filter((command) => command.command.find === 'content')).toEqual([]);
  });

  it('counts racing quotes exactly', async () => {
    const post = await create(app, tokens.ada!, 'quoted by many at once');
    const quoters = ['bea', 'cal', 'dan'];
    await Promise.all(Array.from({ length: 12 }, (_, index) => create(app, tokens[quoters[index % 3]!]!, `quote ${index}`, { quoteOf: post })));
    const counted = await app.gql('query($id: ID!) { post(id: $id) { quoteCount quotes(first: 50) { edges { node { id } } } } }', { id: post }, tokens.ada);
    expect(counted.data.post.quoteCount).toBe(12);
    expect(counted.data.post.quotes.edges).toHaveLength(12);
  });

  it('shows quoted: null to a viewer who may not see the quoted post any more', async () => {
    const post = await create(app, tokens.ada!, 'seen by some');
    const quote = await create(app, tokens.bea!, 'look at this', { quoteOf: post });
    await app.gql('mutation { block(handle: "dan") { handle } }', {}, tokens.ada);
    const seen = await app.gql('query($id: ID!) { post(id: $id) { quoted { id } } }', { id: quote }, tokens.dan);
    expect(seen.data.post.quoted).toBeNull();
    const other = await app.gql('query($id: ID!) { post(id: $id) { quoted { id } } }', { id: quote }, tokens.cal);
    expect(other.data.post.quoted.id).toBe(post);
  });
});
