import type { CommandStartedEvent } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { feedStrategies, timelineContentModes } from '../../src/config.js';
import { startTestApp, type TestApp } from '../support/testApp.js';

const combinations = feedStrategies.flatMap((strategy) => timelineContentModes.map((content) => ({ strategy, content })));
const finds = (commands: CommandStartedEvent[], collection: string) =>
  commands.filter((command) => command.commandName === 'find' && command.command.find === collection).length;

describe('Post.mentions', () => {
  let app: TestApp;
  const tokens: Record<string, string> = {};
  const mentionsOf = async (id: string) =>
    (await app.gql('query($id: ID!) { post(id: $id) { mentions { handle } } }', { id })).data.post.mentions.map((user: { handle: string }) => user.handle);

  beforeAll(async () => {
    app = await startTestApp();
    for (const handle of ['ann', 'bob', 'cyd', 'dee']) tokens[handle] = await app.signUp(handle);
  });
  afterAll(() => app?.stop());

  it('lists the existing accounts the text mentions, each once, in order, whatever the case', async () => {
    const text = 'Hi @Bob, @nobody_here and @ann! Mail a@cyd.com, not @@cyd; @BOB again, and @dee.';
    const { id } = (await app.gql('mutation($t: String!) { createPost(text: $t) { id } }', { t: text }, tokens.cyd)).data.createPost;
    expect(await mentionsOf(id)).toEqual(['bob', 'ann', 'dee']);
    expect(await mentionsOf((await app.gql('mutation { createPost(text: "no one here") { id } }', {}, tokens.cyd)).data.createPost.id)).toEqual([]);
    // A deleted account is mentioned by no one.
    await app.gql('mutation { deleteAccount(password: "correct horse battery") }', {}, tokens.dee);
    expect(await mentionsOf(id)).toEqual(['bob', 'ann']);
  });
});

describe.each(combinations)('a timeline page with mentions and viewer state, one query per kind: $strategy, $content', ({ strategy, content }) => {
  let app: TestApp;
  let reader: string;

  beforeAll(async () => {
    app = await startTestApp({ FEED_STRATEGY: strategy, TIMELINE_CONTENT: content });
    reader = await app.signUp('reader');
    const writers = await Promise.all(['writer1', 'writer2', 'writer3'].map((handle) => app.signUp(handle)));
    // Mentioned accounts need no password: written as sign-up stores them.
    await app.database.db.collection<any>('users').insertMany(
      Array.from({ length: 10 }, (_, i) => ({ _id: `named${i}`, accountId: `named-${i}`, displayName: null, nameLower: '', passwordHash: '-', createdAt: new Date(), followerCount: 0, followingCount: 0 })),
    );
    for (const handle of ['writer1', 'writer2', 'writer3']) await app.gql(`mutation { follow(handle: "${handle}") { handle } }`, {}, reader);
    await app.gql('{ timeline { edges { cursor } } }', {}, reader);
    for (let i = 0; i < 12; i++) {
      const text = `post ${i} for @named${i % 10} and @named${(i + 3) % 10} and @ghost${i}`;
      const { id } = (await app.gql('mutation($t: String!) { createPost(text: $t) { id } }', { t: text }, writers[i % 3])).data.createPost;
      if (i % 2) await app.gql('mutation($id: ID!) { bookmark(id: $id) { id } }', { id }, reader);
      if (i % 3) await app.gql('mutation($id: ID!) { likePost(id: $id) { id } }', { id }, reader);
    }
    await app.settled();
  });
  afterAll(() => app?.stop());

  it('reads mentioned users in one batch, bookmarks and likes in one query each, however many posts', async () => {
    const page = (fields: string) => app.gql(`{ timeline(first: 12) { edges { node { text author { handle } ${fields} } } } }`, {}, reader);
    const cold = async (fields: string) => {
      app.services.graph.invalidateAll();
      let result: any;
      const commands = await app.commandsDuring(async () => (result = await page(fields)));
      return { commands, edges: result.data.timeline.edges as any[] };
    };
    const plain = await cold('');
    const full = await cold('mentions { handle } viewerHasBookmarked viewerHasLiked');
    expect(full.edges).toHaveLength(12);
    for (const { node } of full.edges) {
      const i = Number(/post (\d+)/.exec(node.text)![1]);
      expect(node.mentions.map((user: { handle: string }) => user.handle)).toEqual([`named${i % 10}`, `named${(i + 3) % 10}`]);
      expect(node.viewerHasBookmarked).toBe(i % 2 === 1);
      expect(node.viewerHasLiked).toBe(i % 3 !== 0);
    }
    // Every mentioned user of the page in one batched read, whatever the number of posts and mentions.
    expect(finds(full.commands, 'users')).toBe(finds(plain.commands, 'users') + 1);
    expect(finds(full.commands, 'bookmarks')).toBe(1);
    expect(finds(full.commands, 'likes')).toBe(1);
    expect(finds(plain.commands, 'bookmarks')).toBe(0);
  });
});
