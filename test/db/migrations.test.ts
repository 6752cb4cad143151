import { ObjectId } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authorPlace, postPlace } from '../../src/records/posts.js';
import { startTestApp, type TestApp } from '../support/testApp.js';
import { apiPostId } from '../support/ids.js';
import { backfillSearchTokens } from '../../src/content/searchTokenBackfill.js';

/**
 * A database written before posts carried their place and likes their post's author: the next
 * start gives every post and every like what the shard plan needs, and nothing a user sees changes.
 */
describe('a database from before the shard plan, started again', () => {
  let old: TestApp;
  let upgraded: TestApp;
  const tokens: Record<string, string> = {};
  const legacyId = new ObjectId();
  const taggedLegacyId = new ObjectId();

  beforeAll(async () => {
    old = await startTestApp({ FANOUT_WORKERS: '0' });
    for (const handle of ['ada', 'bea']) tokens[handle] = await old.signUp(handle);
    await old.gql('mutation { createPost(text: "placed") { id } }', {}, tokens.ada);
    const db = old.database.db;
    // As the old code stored them: an id whose bits name no author's place, no `s`, and a like without `r`.
    expect(postPlace(legacyId)).not.toBe(authorPlace('ada'));
    await db.collection('content').insertOne({ _id: legacyId, s: postPlace(legacyId), _a: 'ada', _m: 'from before', _d: new Date(Date.now() - 60_000) });
    await old.gql(`mutation { likePost(id: "${apiPostId(legacyId)}") { likeCount } }`, {}, tokens.bea);
    // From before tags and search tokens: neither `_tg` nor `_w`; and a repost of it, which never carries tokens.
    await db.collection('content').insertOne({ _id: taggedLegacyId, s: postPlace(taggedLegacyId), _a: 'ada', _m: 'Vintage café #Retro 缓存体系', _d: new Date(Date.now() - 30_000) });
    await old.gql(`mutation { repost(id: "${apiPostId(taggedLegacyId)}") { id } }`, {}, tokens.bea);
    await db.collection('content').updateMany({}, { $unset: { _w: '', _tg: '' } });
    await db.collection('content').updateMany({}, { $unset: { s: '' } });
    await db.collection('likes').updateMany({}, { $unset: { r: '' } });
    await db.collection('migrations').deleteMany({ _id: { $in: ['post-places', 'recipient-on-every-interaction', 'post-search-tokens'] } as never });
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
    expect(posts.data.user.posts.edges.map((edge: { node: { text: string } }) => edge.node.text)).toEqual(['placed', 'Vintage café #Retro 缓存体系', 'from before']);
    const legacy = await upgraded.gql(`{ post(id: "${apiPostId(legacyId)}") { text likeCount viewerHasLiked } }`, {}, tokens.bea);
    expect(legacy.data.post).toEqual({ text: 'from before', likeCount: 1, viewerHasLiked: true });
    // The like's counter and its undoing still find the post where its id says it is.
    const unliked = await upgraded.gql(`mutation { unlikePost(id: "${apiPostId(legacyId)}") { likeCount viewerHasLiked } }`, {}, tokens.bea);
    expect(unliked.data.unlikePost).toEqual({ likeCount: 0, viewerHasLiked: false });
  });

  it('gives every post stored without them its tags and search tokens, so searches and tag pages find it; reposts stay without', async () => {
    const search = async (query: string) =>
      (await upgraded.gql('query($q: String!) { searchPosts(query: $q) { edges { node { id text tags } } } }', { q: query }, tokens.bea)).data.searchPosts.edges.map(
        (edge: { node: { id: string } }) => edge.node.id,
      );
    for (const query of ['vintage', 'CAFE', '#retro', '缓存', 'placed']) expect(await search(query), query).toHaveLength(1);
    expect(await search('before')).toEqual([apiPostId(legacyId)]);
    const tagPage = await upgraded.gql('{ tagTimeline(tag: "retro") { edges { node { id tags } } } }', {}, tokens.bea);
    expect(tagPage.data.tagTimeline.edges.map((edge: { node: unknown }) => edge.node)).toEqual([{ id: apiPostId(taggedLegacyId), tags: ['retro'] }]);
    const content = upgraded.database.db.collection('content');
    expect(await content.findOne({ _id: taggedLegacyId })).toMatchObject({ _tg: ['retro'], _w: expect.arrayContaining(['vintage', 'cafe', '#retro', '缓存']) });
    expect(await content.countDocuments({ _o: { $exists: true } })).toBe(1);
    expect(await content.countDocuments({ _o: { $exists: true }, _w: { $exists: true } })).toBe(0);
  });

  it('resumes the token backfill after the last batch it wrote, as a start killed half-way does', async () => {
    const content = upgraded.services.content.content;
    const originals = await content.find({ _o: { $exists: false } }).sort({ _id: 1 }).toArray();
    expect(originals.length).toBeGreaterThanOrEqual(3);
    await content.updateMany({}, { $unset: { _w: '' } });
    // The first batch (of one) was written before the kill: the next start goes on after it.
    const saved: ObjectId[] = [originals[0]!._id];
    const written = await backfillSearchTokens(content, { read: async () => saved.at(-1) ?? null, save: async (after) => void saved.push(after) }, 1);
    expect(written).toBe(originals.length - 1);
    expect(saved.slice(1)).toEqual(originals.slice(1).map((doc) => doc._id));
    expect(await content.countDocuments({ _o: { $exists: false }, _w: { $exists: false } })).toBe(1);
    // Run again from the start, it writes the same tokens it wrote before.
    const before = await content.find({ _id: originals[1]!._id }).toArray();
    await backfillSearchTokens(content, { read: async () => null, save: async () => {} });
    expect(await content.find({ _id: originals[1]!._id }).toArray()).toEqual(before);
    expect(await content.countDocuments({ _o: { $exists: false }, _w: { $exists: false } })).toBe(0);
  });

  it('runs each migration once: a later start finds nothing left to do', async () => {
    const names = (await upgraded.database.db.collection('migrations').find().toArray()).map((doc) => doc._id);
    expect(names).toEqual(expect.arrayContaining(['post-places', 'recipient-on-every-interaction', 'post-search-tokens']));
  });
});
