import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/testApp.js';

describe('batched loading', () => {
  let app: TestApp;
  let readerToken: string;
  const authors = Array.from({ length: 12 }, (_, i) => `author_${i}`);

  beforeAll(async () => {
    app = await startTestApp();
    readerToken = await app.signUp('reader');
    for (const author of authors) {
      const token = await app.signUp(author);
      await app.gql('mutation { createPost(text: "hello") { id } }', {}, token);
      await app.gql('mutation { follow(handle: "reader") { handle } }', {}, token);
    }
    for (const author of authors.slice(0, 6)) {
      await app.gql(`mutation { follow(handle: "${author}") { handle } }`, {}, readerToken);
    }
  });
  afterAll(() => app?.stop());

  const finds = (commands: { commandName: string; command: Record<string, any> }[], collection: string) =>
    commands.filter((c) => c.commandName === 'find' && c.command.find === collection);

  it('loads every author on a timeline page in one users query', async () => {
    app.services.graph.invalidateAll(); // a cold process: nothing held in front of the database
    let result: any;
    const commands = await app.commandsDuring(async () => {
      result = await app.gql('{ timeline(first: 50) { edges { node { text author { handle displayName followerCount } } } } }', {}, readerToken);
    });
    const handles = new Set(result.data.timeline.edges.map((e: any) => e.node.author.handle));
    expect(handles.size).toBe(6);
    // The token's account, then all six authors at once.
    expect(finds(commands, 'users')).toHaveLength(2);
    expect(finds(commands, 'users').filter((c) => c.command.filter._id.$in?.length >= 6)).toHaveLength(1);
    expect(finds(commands, 'content')).toHaveLength(1);
    // Warm: the authors (and the viewer's account and follow list) are held in this process.
    const again = await app.warmCommandsDuring(
      () => app.gql('{ timeline(first: 50) { edges { node { author { handle } } } } }', {}, readerToken),
      ['users', 'following'],
    );
    expect(finds(again, 'users')).toHaveLength(0);
    expect(finds(again, 'following')).toHaveLength(0);
  });

  it('answers viewerIsFollowing for a page of users in one query', async () => {
    app.services.graph.invalidateAll();
    let result: any;
    const commands = await app.commandsDuring(async () => {
      result = await app.gql('{ viewer { followers(first: 50) { edges { node { handle viewerIsFollowing } } } } }', {}, readerToken);
    });
    const nodes = result.data.viewer.followers.edges.map((e: any) => e.node);
    expect(nodes).toHaveLength(12);
    expect(nodes.filter((n: any) => n.viewerIsFollowing).map((n: any) => n.handle).sort()).toEqual(authors.slice(0, 6).sort());
    const lookups = finds(commands, 'following').filter((c) => c.command.filter._t?.$in);
    expect(lookups).toHaveLength(1);
    expect(finds(commands, 'users')).toHaveLength(2); // the viewer, then the page of followers
  });
});
