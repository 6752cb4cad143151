import { ObjectId } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/testApp.js';
import { apiPostId, internalId } from '../support/ids.js';

/** Likes, reposts and replies through the API: counts on the post, the viewer's own state, errors. */
describe('likes, reposts and replies', () => {
  let app: TestApp;
  const tokens: Record<string, string> = {};

  const gql = async (handle: string | null, query: string, variables: Record<string, unknown> = {}) =>
    app.gql(query, variables, handle ? tokens[handle] : undefined);
  const ok = async (handle: string | null, query: string, variables: Record<string, unknown> = {}) => {
    const result = await gql(handle, query, variables);
    if (result.errors) throw new Error(JSON.stringify(result.errors));
    return result.data;
  };
  const post = async (handle: string, text: string, replyTo?: string): Promise<string> =>
    (await ok(handle, 'mutation($t: String!, $r: ID) { createPost(text: $t, replyTo: $r) { id } }', { t: text, r: replyTo ?? null })).createPost.id;
  const state = `likeCount repostCount replyCount viewerHasLiked viewerHasReposted`;
  const postState = async (handle: string | null, id: string) => (await ok(handle, `{ post(id: "${id}") { ${state} } }`)).post;

  beforeAll(async () => {
    app = await startTestApp();
    for (const handle of ['amy', 'bob', 'cyd', 'dee']) tokens[handle] = await app.signUp(handle);
  });
  afterAll(() => app?.stop());

  it('counts 50 concurrent likes by one user once, and unlikes back to zero', async () => {
    const id = await post('amy', 'like me');
    const likes = await Promise.all(Array.from({ length: 50 }, () => gql('bob', `mutation { likePost(id: "${id}") { likeCount viewerHasLiked } }`)));
    for (const like of likes) expect(like.data?.likePost).toEqual({ likeCount: 1, viewerHasLiked: true });
    expect(await postState('bob', id)).toMatchObject({ likeCount: 1, viewerHasLiked: true });
    expect(await postState('cyd', id)).toMatchObject({ likeCount: 1, viewerHasLiked: false });
    expect(await postState(null, id)).toMatchObject({ likeCount: 1, viewerHasLiked: false });

    // Likes and unlikes by many users, racing: the count is what is left.
    await Promise.all(['amy', 'cyd', 'dee'].map((handle) => ok(handle, `mutation { likePost(id: "${id}") { id } }`)));
    await Promise.all([
      ...Array.from({ length: 10 }, () => ok('bob', `mutation { unlikePost(id: "${id}") { id } }`)),
      ...Array.from({ length: 10 }, () => ok('cyd', `mutation { unlikePost(id: "${id}") { id } }`)),
    ]);
    expect(await postState('bob', id)).toMatchObject({ likeCount: 2, viewerHasLiked: false });
    const doc = await app.database.db.collection('content').findOne({ _id: internalId(id) });
    expect(doc?.n?.l).toBe(2);
    // The tokens the changes left go with the sweep's next pruning pass.
    await app.services.feed.repairStalled();
    expect((await app.database.db.collection<any>('content').findOne({ _id: internalId(id) }))?.pc ?? []).toEqual([]);
  });

  it('ends with the last of a user racing likes and unlikes, with the count matching', async () => {
    const id = await post('amy', 'flip flop');
    await Promise.all(
      Array.from({ length: 30 }, (_, i) => ok('dee', `mutation { ${i % 2 ? 'unlikePost' : 'likePost'}(id: "${id}") { id } }`)),
    );
    const liked = (await postState('dee', id)).viewerHasLiked;
    expect((await postState('dee', id)).likeCount).toBe(liked ? 1 : 0);
    // Taken-back likes go with the sweep's next pruning pass: then only a standing one is left.
    await app.services.feed.repairStalled();
    expect(await app.database.db.collection('likes').countDocuments({ p: internalId(id) })).toBe(liked ? 1 : 0);
  });

  it('reposts once however often asked, returns the original, and refuses own posts', async () => {
    const id = await post('amy', 'worth sharing');
    const reposts = await Promise.all(Array.from({ length: 20 }, () => gql('bob', `mutation { repost(id: "${id}") { id repostCount viewerHasReposted } }`)));
    for (const repost of reposts) expect(repost.data?.repost).toEqual({ id, repostCount: 1, viewerHasReposted: true });
    expect(await app.database.db.collection('content').countDocuments({ '_o._id': internalId(id) })).toBe(1);

    const own = await gql('amy', `mutation { repost(id: "${id}") { id } }`);
    expect(own.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    const undone = await ok('bob', `mutation { undoRepost(id: "${id}") { id repostCount viewerHasReposted } }`);
    expect(undone.undoRepost).toEqual({ id, repostCount: 0, viewerHasReposted: false });
    expect(await ok('bob', `mutation { undoRepost(id: "${id}") { repostCount } }`)).toEqual({ undoRepost: { repostCount: 0 } });
    expect(await app.database.db.collection('content').countDocuments({ '_o._id': internalId(id) })).toBe(0);
  });

  it('leaves no repost behind when the original is deleted, reposts scanned and all, just before the repost is stored', async () => {
    const id = await post('amy', 'deleted under a repost');
    const { content } = app.services;
    const store = content.storePost.bind(content);
    let deleted = false;
    // The repost's request has checked the original; the whole deletion runs before its entry is stored.
    content.storePost = async (record) => {
      if (record.repostOf && !deleted) {
        deleted = true;
        await ok('amy', `mutation { deletePost(id: "${id}") }`);
      }
      return store(record);
    };
    try {
      const repost = await gql('bob', `mutation { repost(id: "${id}") { id } }`);
      expect(repost.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    } finally {
      content.storePost = store;
    }
    expect(deleted).toBe(true);
    expect(await app.database.db.collection('content').countDocuments({ '_o._id': internalId(id) })).toBe(0);
    const bobsPosts = await ok('bob', '{ user(handle: "bob") { posts(first: 20) { edges { node { id } repostedBy { handle } } } } }');
    expect(bobsPosts.user.posts.edges.filter((edge: any) => edge.node.id === id)).toEqual([]);
  });

  it('refuses unknown posts, signed-out callers and bad ids, writing nothing', async () => {
    const unknown = apiPostId(new ObjectId());
    for (const mutation of ['likePost', 'unlikePost', 'repost', 'undoRepost']) {
      expect((await gql('bob', `mutation { ${mutation}(id: "${unknown}") { id } }`)).errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
      expect((await gql('bob', `mutation { ${mutation}(id: "not-an-id") { id } }`)).errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    }
    const id = await post('amy', 'hands off');
    for (const mutation of ['likePost', 'repost']) {
      expect((await gql(null, `mutation { ${mutation}(id: "${id}") { id } }`)).errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    }
    const reply = await gql('bob', 'mutation { createPost(text: "to nowhere", replyTo: "' + unknown + '") { id } }');
    expect(reply.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    expect(await postState('bob', id)).toEqual({ likeCount: 0, repostCount: 0, replyCount: 0, viewerHasLiked: false, viewerHasReposted: false });
    expect(await app.database.db.collection('content').countDocuments({ _m: 'to nowhere' })).toBe(0);
  });

  it('lists replies oldest first, counts them, and leaves them with replyTo null when the parent goes', async () => {
    const parent = await post('amy', 'ask me anything');
    const replies: string[] = [];
    for (let i = 0; i < 5; i++) replies.push(await post(['bob', 'cyd'][i % 2]!, `answer ${i}`, parent));
    const page = `query($after: String) { post(id: "${parent}") { replyCount replies(first: 2, after: $after) {
      edges { cursor node { id text replyTo { id } } } pageInfo { hasNextPage hasPreviousPage endCursor } } } }`;
    const seen: string[] = [];
    let after: string | null = null;
    for (;;) {
      const result: any = (await ok('dee', page, { after })).post;
      expect(result.replyCount).toBe(5);
      expect(result.replies.pageInfo.hasPreviousPage).toBe(after !== null);
      for (const edge of result.replies.edges) expect(edge.node.replyTo).toEqual({ id: parent });
      seen.push(...result.replies.edges.map((edge: any) => edge.node.id));
      if (!result.replies.pageInfo.hasNextPage) break;
      after = result.replies.pageInfo.endCursor;
    }
    expect(seen).toEqual(replies);

    await ok('bob', `mutation { deletePost(id: "${replies[0]}") }`);
    expect((await postState('dee', parent)).replyCount).toBe(4);
    await ok('amy', `mutation { deletePost(id: "${parent}") }`);
    const orphan = (await ok('dee', `{ post(id: "${replies[1]}") { text replyTo { id } } }`)).post;
    expect(orphan).toEqual({ text: 'answer 1', replyTo: null });
  });

  it('answers the viewer state of a 100-post page with one query per kind', async () => {
    await ok('dee', 'mutation { follow(handle: "amy") { handle } }');
    const ids: string[] = [];
    for (let i = 0; i < 100; i++) ids.push(await post('amy', `page filler ${i}`));
    for (const id of ids.slice(0, 30)) await ok('dee', `mutation { likePost(id: "${id}") { id } }`);
    for (const id of ids.slice(20, 40)) await ok('dee', `mutation { repost(id: "${id}") { id } }`);
    await app.settled();

    let page: any;
    const commands = await app.commandsDuring(async () => {
      page = await ok('dee', `{ timeline(first: 100) { edges { repostedBy { handle } node { id ${state} replyTo { id } author { handle } } } } }`);
    });
    const edges = page.timeline.edges as { repostedBy: unknown; node: Record<string, unknown> }[];
    expect(edges).toHaveLength(100);
    const liked = edges.filter((edge) => edge.node.viewerHasLiked).map((edge) => edge.node.id);
    expect(new Set(liked)).toEqual(new Set(ids.slice(0, 30)));
    // dee follows amy, so her reposts of amy's posts add no second occurrence.
    expect(edges.every((edge) => edge.repostedBy === null)).toBe(true);
    expect(edges.filter((edge) => edge.node.viewerHasReposted).map((edge) => edge.node.id).sort()).toEqual(ids.slice(20, 40).sort());
    const reads = (collection: string) => commands.filter((command) => command.command.find === collection).length;
    expect(reads('likes')).toBe(1);
    expect(reads('reposts')).toBe(1);
    expect(reads('users')).toBeLessThanOrEqual(1); // authors batched, or already held in process
  });
});
