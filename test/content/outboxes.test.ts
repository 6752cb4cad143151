import { newPostId, byPostId } from '../../src/records/posts.js';
import { ObjectId } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newBody, type PostRecord } from '../../src/records/posts.js';
import { Outboxes, pageOfOutboxes, type Outbox } from '../../src/content/outboxes.js';
import { compareNewestFirst, isBeyond, type PageRequest, type PostPosition } from '../../src/content/position.js';
import { seededRandom } from '../../bench/generate.js';
import { heardEverything } from '../support/announcements.js';
import { answersAs, startTestApp, type TestApp } from '../support/testApp.js';
import { publicPost } from '../support/records.js';
import { internalId } from '../support/ids.js';

let made = 0;
/** Ids in random order, never twice the same. */
const post = (authorId: string, createdAt: number, random: () => number): PostRecord =>
  publicPost({
    id: ObjectId.createFromHexString((Math.floor(random() * 0xffff) * 0x100000 + made++).toString(16).padStart(24, '0')),
    authorId,
    text: `${authorId} at ${createdAt}`,
    createdAt: new Date(createdAt),
  });

/** The page straight from every post there is. */
function oracle(all: readonly PostRecord[], request: PageRequest) {
  const nearestFirst = all.filter((p) => isBeyond(p, request.direction, request.from)).sort(compareNewestFirst);
  if (request.direction === 'newer') nearestFirst.reverse();
  const items = nearestFirst.slice(0, request.limit);
  return { items: (request.direction === 'older' ? items : items.reverse()).map((p) => p.body.text), hasMore: nearestFirst.length > request.limit };
}

describe('a page merged from the authors’ outboxes', () => {
  it('is the page every post gives, or null when the outboxes do not hold all of it', () => {
    const random = seededRandom(7);
    let answered = 0;
    let refused = 0;
    for (let trial = 0; trial < 3000; trial++) {
      // Few distinct times, so posts of one millisecond (ordered by id) are common.
      const authors = Array.from({ length: 1 + Math.floor(random() * 4) }, (_, i) => `a${i}`);
      const byAuthor = authors.map((authorId) =>
        Array.from({ length: Math.floor(random() * 12) }, () => post(authorId, 1000 + Math.floor(random() * 30), random)).sort(compareNewestFirst),
      );
      const all = byAuthor.flat();
      const somewhere = (): PostPosition => (all.length > 0 && random() < 0.7 ? all[Math.floor(random() * all.length)]! : post('x', 995 + Math.floor(random() * 40), random));
      // Each outbox holds its author's posts at or above a floor, or all of them.
      const outboxes: Outbox[] = byAuthor.map((posts) => {
        if (random() < 0.4) return { posts, floor: null };
        const floor = somewhere();
        return { posts: posts.filter((p) => compareNewestFirst(p, floor) <= 0), floor };
      });
      const request: PageRequest = {
        direction: random() < 0.6 ? 'older' : 'newer',
        from: random() < 0.3 ? null : somewhere(),
        limit: 1 + Math.floor(random() * 6),
      };
      const page = pageOfOutboxes(outboxes, request);
      if (outboxes.every((outbox) => outbox.floor === null)) expect(page).not.toBeNull();
      if (page === null) {
        refused++;
        continue;
      }
      answered++;
      expect({ items: page.items.map((p) => p.body.text), hasMore: page.hasMore }).toEqual(oracle(all, request));
    }
    // Both outcomes occur often, so neither branch goes unchecked.
    expect(answered).toBeGreaterThan(1000);
    expect(refused).toBeGreaterThan(300);
  });
});

describe('fanout on read from the outboxes, on the database', () => {
  let app: TestApp;
  const tokens: Record<string, string> = {};
  const ok = answersAs(() => app, tokens);
  const page = `query($first: Int, $after: String, $last: Int, $before: String) {
    timeline(first: $first, after: $after, last: $last, before: $before) {
      edges { node { text } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
    }
  }`;
  /** Every post of the reader's timeline, newest first, as the database holds them. */
  const stored = async () =>
    (await app.database.db.collection<any>('content').find({ _a: { $in: ['prolific', 'quiet', 'reader'] } }).sort({ _d: -1, _id: -1 }).toArray()).map(
      (doc) => doc._m as string,
    );

  beforeAll(async () => {
    app = await startTestApp({ FEED_STRATEGY: 'fanout-on-read' });
    for (const handle of ['reader', 'prolific', 'quiet']) tokens[handle] = await app.signUp(handle);
    for (const handle of ['prolific', 'quiet']) await ok('reader', `mutation { follow(handle: "${handle}") { handle } }`);
    // More posts than an outbox keeps (40), several in one millisecond now and then.
    for (let i = 0; i < 55; i++) await ok(i % 9 === 4 ? 'quiet' : 'prolific', 'mutation($text: String!) { createPost(text: $text) { id } }', { text: `post ${i}` });
  });
  afterAll(() => app?.stop());

  it('pages back and forth through more posts than an outbox keeps, exactly as stored', async () => {
    const expected = await stored();
    const seen: string[] = [];
    let after: string | null = null;
    const cursors: string[] = [];
    for (;;) {
      const { timeline } = await ok('reader', page, { first: 7, after });
      seen.push(...timeline.edges.map((edge: any) => edge.node.text));
      cursors.push(timeline.pageInfo.startCursor);
      if (!timeline.pageInfo.hasNextPage) break;
      after = timeline.pageInfo.endCursor;
    }
    expect(seen).toEqual(expected);
    // Back up, newer pages from the oldest, as a client scrolling up does.
    const back: string[] = [];
    let before: string | null = cursors.at(-1)!;
    for (;;) {
      const { timeline } = await ok('reader', page, { last: 6, before });
      back.unshift(...timeline.edges.map((edge: any) => edge.node.text));
      if (!timeline.pageInfo.hasPreviousPage) break;
      before = timeline.pageInfo.startCursor;
    }
    expect(back).toEqual(expected.slice(0, 7 * (cursors.length - 1)));
    expect(app.services.content.outboxStats().hits).toBeGreaterThan(0);
  });

  it('shows a new post and drops a deleted one on the very next page of this instance', async () => {
    await ok('reader', page, { first: 5 });
    await ok('reader', page, { first: 5 }); // served from the outboxes now
    const hits = app.services.content.outboxStats().hits;
    const { createPost } = await ok('quiet', 'mutation { createPost(text: "fresh") { id } }');
    expect((await ok('reader', page, { first: 5 })).timeline.edges[0].node.text).toBe('fresh');
    await ok('quiet', `mutation { deletePost(id: "${createPost.id}") }`);
    const texts = (await ok('reader', page, { first: 5 })).timeline.edges.map((edge: any) => edge.node.text);
    expect(texts).not.toContain('fresh');
    expect(texts).toEqual((await stored()).slice(0, 5));
    expect(app.services.content.outboxStats().hits).toBeGreaterThan(hits);
  });

  it('takes a post stored or deleted by this process into its author’s outbox at once, live events or not', async () => {
    // Straight through the content service: no live event is published, so none can mend a stale outbox.
    const { content } = app.services;
    const newest = async () => (await content.pageByAuthors(['hermit'], { direction: 'older', from: null, limit: 5 })).items.map((post) => post.body.text);
    expect(await newest()).toEqual([]);
    const hits = content.outboxStats().hits;
    expect(await newest()).toEqual([]);
    expect(content.outboxStats().hits).toBe(hits + 1); // held now
    const post = content.preparePost('hermit', newBody('stored here'), { pulled: false });
    await content.storePost(post);
    expect(await newest()).toEqual(['stored here']);
    await content.deletePost(post);
    expect(await newest()).toEqual([]);
  });

  it('does not keep an outbox whose load overlapped a change of that author', async () => {
    const outboxes = new Outboxes(app.database.db.collection('content'));
    const newest = { direction: 'older', from: null, limit: 5 } as const;
    const texts = async () => (await outboxes.page(['loner'], newest))!.items.map((post) => post.body.text);
    const loading = texts(); // the load has started
    outboxes.forget(['loner']); // a post of loner's is stored meanwhile
    expect(await loading).toEqual([]);
    await app.database.db.collection('content').insertOne({ ...byPostId(newPostId('loner')), _a: 'loner', _m: 'stored during the load', _d: new Date() });
    expect(await texts()).toEqual(['stored during the load']);
  });

  it('drops a post from the outbox when another caller (a fanout worker elsewhere) deleted it first', async () => {
    const invalidations = () => app.services.content.outboxStats().invalidations;
    await heardEverything(app); // earlier tests' announcements (a post inserted straight into content is one) land first
    const before = invalidations();
    const { createPost } = await ok('quiet', 'mutation { createPost(text: "raced") { id } }');
    // The post's own live event comes back too and drops the outbox again: let it land first.
    await heardEverything(app);
    expect(invalidations()).toBe(before + 2);
    const newest = () => app.services.content.pageByAuthors(['quiet'], { direction: 'older', from: null, limit: 1 });
    expect((await newest()).items[0]!.body.text).toBe('raced');
    expect((await newest()).items[0]!.body.text).toBe('raced'); // from the outbox
    const id = internalId(createPost.id);
    await app.database.db.collection('content').deleteOne({ _id: id });
    expect(await app.services.content.deletePost({ id, authorId: 'quiet' })).toBe(false);
    expect((await newest()).items[0]!.body.text).not.toBe('raced');
  });
});
