import { ObjectId } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authorPlace, postPlace } from '../../src/records/posts.js';
import { startTestApp, type TestApp } from '../support/testApp.js';
import { apiPostId } from '../support/ids.js';

/**
 * A database written before posts carried their place and likes their post's author: the next
 * start gives every post and every like what the shard plan needs, and nothing a user sees changes.
 */
describe('a database from before the shard plan, started again', () => {
  let old: TestApp;
  let upgraded: TestApp;
  const tokens: Record<string, string> = {};
  const legacyId = new ObjectId();

  beforeAll(async () => {
    old = await startTestApp({ FANOUT_WORKERS: '0' });
    for (const handle of ['ada', 'bea']) tokens[handle] = await old.signUp(handle);
    await old.gql('mutation { createPost(text: "placed") { id } }', {}, tokens.ada);
    const db = old.database.db;
    // As the old code stored them: an id whose bits name no author's place, no `s`, and a like without `r`.
    expect(postPlace(legacyId)).not.toBe(authorPlace('ada'));
    await db.collection('content').insertOne({ _id: legacyId, s: postPlace(legacyId), _a: 'ada', _m: 'from before', _d: new Date(Date.now() - 60_000) });
    await old.gql(`mutation { likePost(id: "${apiPostId(legacyId)}") { likeCount } }`, {}, tokens.bea);
    await db.collection('content').updateMany({}, { $unset: { s: '' } });
    await db.collection('likes').updateMany({}, { $unset: { r: '' } });
    await db.collection('migrations').deleteMany({ _id: { $in: ['post-places', 'recipient-on-every-interaction'] } as never });
    upgraded = await startTestApp({ MONGODB_URI: old.mongodbUri, FANOUT_WORKERS: '0' });
  }, 60_000);

  afterAll(async () => {
    await upgraded?.stop();
    await old?.stop();
  });

  it('gives every post its place and every like its author, and still shows and counts them all', async () => {
    const db = upgraded.database.db;
    expect(await db.collection('content').countDocuments({ s: { $exists: false } })).toBe(0);
    expect(await db.collection('likes').countDocuments({ r: { $exists: false } })).toBe(0);
    const posts = await upgraded.gql('{ user(handle: "ada") { posts(first: 10) { edges { node { text } } } } }', {}, tokens.bea);
    expect(posts.data.user.posts.edges.map((edge: { node: { text: string } }) => edge.node.text)).toEqual(['placed', 'from before']);
    const legacy = await upgraded.gql(`{ post(id: "${apiPostId(legacyId)}") { text likeCount viewerHasLiked } }`, {}, tokens.bea);
    expect(legacy.data.post).toEqual({ text: 'from before', likeCount: 1, viewerHasLiked: true });
    // The like's counter and its undoing still find the post where its id says it is.
    const unliked = await upgraded.gql(`mutation { unlikePost(id: "${apiPostId(legacyId)}") { likeCount viewerHasLiked } }`, {}, tokens.bea);
    expect(unliked.data.unlikePost).toEqual({ likeCount: 0, viewerHasLiked: false });
  });

  it('runs each migration once: a later start finds nothing left to do', async () => {
    const names = (await upgraded.database.db.collection('migrations').find().toArray()).map((doc) => doc._id);
    expect(names).toEqual(expect.arrayContaining(['post-places', 'recipient-on-every-interaction']));
  });
});
