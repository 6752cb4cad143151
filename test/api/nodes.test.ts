import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPost, follow } from '../live/liveClient.js';
import { answersAs, requestCommands, startTestApp, type TestApp } from '../support/testApp.js';

/**
 * Global Object Identification: every object with an identity has an opaque id unique across
 * types, and `node`/`nodes` answer exactly what the type's own field answers the viewer, with no
 * way to tell "not yours" or "not visible" from "never existed".
 */
describe('node and nodes', () => {
  let app: TestApp;
  const tokens: Record<string, string> = {};
  const ok = answersAs(() => app, tokens);
  const ids: Record<string, string> = {};
  const codeOf = (result: { errors?: { extensions?: { code?: string } }[] }) => result.errors?.[0]?.extensions?.code;

  beforeAll(async () => {
    app = await startTestApp();
    for (const handle of ['nadia', 'omar', 'pia']) tokens[handle] = await app.signUp(handle);
    await follow(app, tokens.pia!, 'nadia');
    ids.public = (await createPost(app, tokens.nadia!, 'public words')).id;
    ids.followersOnly = (await ok('nadia', 'mutation { createPost(text: "for followers", visibility: FOLLOWERS) { id } }')).createPost.id;
    ids.list = (await ok('nadia', 'mutation { createList(name: "Close") { id } }')).createList.id;
    ids.filter = (await ok('nadia', 'mutation { addKeywordFilter(phrase: "spoilers") { id } }')).addKeywordFilter.id;
    ids.nadia = (await ok('nadia', '{ viewer { id } }')).viewer.id;
    await ok('omar', 'mutation($id: ID!) { likePost(id: $id) { id } }', { id: ids.public });
    ids.notification = (await ok('nadia', '{ notifications(first: 1) { edges { node { id } } } }')).notifications.edges[0].node.id;
  });
  afterAll(() => app?.stop());

  const nodeQuery = `query($id: ID!) { node(id: $id) {
    __typename id
    ... on User { handle }
    ... on Post { text }
    ... on List { name }
    ... on Notification { kind }
    ... on KeywordFilter { phrase }
  } }`;

  it('finds each type again by its id, as its owner sees it, and every id is distinct and opaque', async () => {
    const expected = {
      nadia: { __typename: 'User', handle: 'nadia' },
      public: { __typename: 'Post', text: 'public words' },
      followersOnly: { __typename: 'Post', text: 'for followers' },
      list: { __typename: 'List', name: 'Close' },
      filter: { __typename: 'KeywordFilter', phrase: 'spoilers' },
      notification: { __typename: 'Notification', kind: 'LIKE' },
    };
    for (const [name, shape] of Object.entries(expected)) {
      expect((await ok('nadia', nodeQuery, { id: ids[name] })).node, name).toEqual({ id: ids[name], ...shape });
    }
    const all = Object.values(ids);
    expect(new Set(all).size).toBe(all.length);
    // Nothing a person types: an id is never a handle, so signing up with one is refused.
    for (const id of all) expect(id).not.toMatch(/^[a-z0-9_]{3,30}$/);
    expect(codeOf(await app.gql('mutation($h: String!) { signUp(handle: $h, password: "long enough") { token } }', { h: ids.public }))).toBe('BAD_USER_INPUT');
  });

  it('answers null for what the viewer may not see, the same as for an id that never existed', async () => {
    const unknownPost = Buffer.from(`P:${'f'.repeat(24)}`).toString('base64url');
    const forOmar = async (id: string) => app.gql(nodeQuery, { id }, tokens.omar);
    for (const name of ['followersOnly', 'list', 'filter', 'notification']) {
      const answer = await forOmar(ids[name]!);
      expect(answer, name).toEqual({ status: 200, data: { node: null } });
    }
    expect(await forOmar(unknownPost)).toEqual({ status: 200, data: { node: null } });
    // node answers what the type's own field answers: a follower sees the followers-only post.
    const viaPost = await ok('pia', 'query($id: ID!) { post(id: $id) { text } }', { id: ids.followersOnly });
    expect(viaPost.post).toEqual({ text: 'for followers' });
    expect((await ok('pia', nodeQuery, { id: ids.followersOnly })).node).toMatchObject({ text: 'for followers' });
    expect((await ok('omar', 'query($id: ID!) { post(id: $id) { text } }', { id: ids.followersOnly })).post).toBeNull();
  });

  it('treats malformed ids and ids of no known type as unknown, and the old handle and database ids as BAD_USER_INPUT', async () => {
    for (const id of ['', '!!!', 'Wjox', Buffer.from('Z:1').toString('base64url'), Buffer.from('P:not-hex').toString('base64url')]) {
      expect(await app.gql(nodeQuery, { id }, tokens.nadia), id).toEqual({ status: 200, data: { node: null } });
    }
    const hexPostId = Buffer.from(ids.public!, 'base64url').toString().split(':')[1]!;
    for (const former of ['nadia', hexPostId]) {
      expect(codeOf(await app.gql(nodeQuery, { id: former }, tokens.nadia)), former).toBe('BAD_USER_INPUT');
    }
    // Mutations: NOT_FOUND for an id that names nothing of the type, BAD_USER_INPUT for a former form.
    expect(codeOf(await app.gql('mutation($id: ID!) { likePost(id: $id) { id } }', { id: ids.list }, tokens.omar))).toBe('NOT_FOUND');
    expect(codeOf(await app.gql('mutation($id: ID!) { likePost(id: $id) { id } }', { id: 'Wjox' }, tokens.omar))).toBe('NOT_FOUND');
    expect(codeOf(await app.gql('mutation($id: ID!) { likePost(id: $id) { id } }', { id: hexPostId }, tokens.omar))).toBe('BAD_USER_INPUT');
  });

  it('answers nodes in the order asked, null where node would be, and a former id fails its own item only', async () => {
    const asked = [ids.list, 'Wjox', ids.public, 'nadia', ids.nadia];
    const result = await app.gql('query($ids: [ID!]!) { nodes(ids: $ids) { __typename id } }', { ids: asked }, tokens.nadia);
    expect(result.data.nodes).toEqual([
      { __typename: 'List', id: ids.list },
      null,
      { __typename: 'Post', id: ids.public },
      null,
      { __typename: 'User', id: ids.nadia },
    ]);
    expect(result.errors).toHaveLength(1);
    expect(result.errors![0]).toMatchObject({ path: ['nodes', 3], extensions: { code: 'BAD_USER_INPUT' } });
  });

  it('reads the ids of one type together: a hundred ids of mixed types cost at most one query per collection', async () => {
    const posts = await Promise.all(Array.from({ length: 40 }, (_, i) => createPost(app, tokens.nadia!, `batch ${i}`)));
    const asked = [...posts.map((post) => post.id), ...Array.from({ length: 60 }, (_, i) => [ids.list, ids.filter, ids.notification, ids.nadia, ids.public][i % 5]!)];
    let answer: any;
    const commands = requestCommands(
      await app.commandsDuring(async () => {
        answer = await app.gql('query($ids: [ID!]!) { nodes(ids: $ids) { id } }', { ids: asked }, tokens.nadia);
      }),
    );
    expect(answer.errors).toBeUndefined();
    expect(answer.data.nodes.map((node: { id: string } | null) => node?.id)).toEqual(asked);
    const reads = commands.filter((command) => command.commandName === 'find' || command.commandName === 'aggregate');
    const perCollection = new Map<string, number>();
    for (const read of reads) {
      const collection = String(read.command[read.commandName]);
      perCollection.set(collection, (perCollection.get(collection) ?? 0) + 1);
    }
    for (const [collection, count] of perCollection) expect(count, collection).toBe(1);
  });

  it('prices nodes by how many ids it asks for', async () => {
    const many = Array.from({ length: 1000 }, () => ids.public!);
    const result = await app.gql('query($ids: [ID!]!) { nodes(ids: $ids) { id ... on Post { text author { handle } } } }', { ids: many });
    expect(result.status).toBe(400);
    expect(result.errors?.[0]?.extensions).toMatchObject({ code: 'QUERY_TOO_COMPLEX' });
  });
});
