import { newPostId, byPostId } from '../../src/records/posts.js';
import { ObjectId } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seededRandom } from '../../bench/generate.js';
import { Outboxes, pageOfOutboxes, withPost, type Outbox } from '../../src/content/outboxes.js';
import { compareNewestFirst, isBeyond, type PageRequest } from '../../src/content/position.js';
import type { PostRecord } from '../../src/records/posts.js';
import { publicPost } from '../support/records.js';
import { heardEverything } from '../support/announcements.js';
import { startTestApp, type TestApp } from '../support/testApp.js';

let made = 0;
const post = (authorId: string, createdAt: number): PostRecord =>
  publicPost({ id: ObjectId.createFromHexString((made++).toString(16).padStart(24, '0')), authorId, text: `${authorId} #${made}`, createdAt: new Date(createdAt) });

const texts = (items: readonly PostRecord[]) => items.map((item) => item.body.text);

/** The page straight from every post there is. */
function oracle(all: readonly PostRecord[], request: PageRequest) {
  const nearestFirst = all.filter((p) => isBeyond(p, request.direction, request.from)).sort(compareNewestFirst);
  if (request.direction === 'newer') nearestFirst.reverse();
  const items = nearestFirst.slice(0, request.limit);
  return { items: texts(request.direction === 'older' ? items : items.reverse()), hasMore: nearestFirst.length > request.limit };
}

describe('an outbox taking posts in place', () => {
  it('answers every page as a fresh load would, whatever order the posts arrive in', () => {
    const random = seededRandom(11);
    for (let trial = 0; trial < 2000; trial++) {
      // What a load found (all of them, or the newest 40 above a floor), then posts stored after it, in any order.
      const earlier = Array.from({ length: Math.floor(random() * 60) }, () => post('ann', 1000 + Math.floor(random() * 50))).sort(compareNewestFirst);
      const loaded = earlier.slice(0, 40);
      let outbox: Outbox = { posts: loaded, floor: earlier.length > 40 ? loaded.at(-1)! : null };
      const later = Array.from({ length: Math.floor(random() * 50) }, () => post('ann', 1000 + Math.floor(random() * 80)));
      for (const added of later) {
        outbox = withPost(outbox, added);
        if (random() < 0.2) outbox = withPost(outbox, added); // its own announcement, coming back
      }
      expect(outbox.posts.length).toBeLessThanOrEqual(40);
      const all = [...earlier, ...later];
      for (let ask = 0; ask < 5; ask++) {
        const from = random() < 0.3 ? null : all[Math.floor(random() * all.length)] ?? null;
        const request: PageRequest = { direction: random() < 0.5 ? 'older' : 'newer', from, limit: 1 + Math.floor(random() * 10) };
        const page = pageOfOutboxes([outbox], request);
        if (page) expect({ items: texts(page.items), hasMore: page.hasMore }).toEqual(oracle(all, request));
        else expect(from !== null || request.direction === 'newer').toBe(true); // a newest page is always answered
      }
    }
  });
});

describe('outboxes held by an instance', () => {
  let app: TestApp;
  let outboxes: Outboxes;
  const newest = { direction: 'older', from: null, limit: 5 } as const;
  const page = async (authorId: string) => texts((await outboxes.page([authorId], newest))!.items);
  const contentReads = async (read: () => Promise<unknown>) =>
    (await app.commandsDuring(read)).filter((event) => event.commandName === 'find' && event.command.find === 'content').length;

  beforeAll(async () => {
    app = await startTestApp();
    outboxes = new Outboxes(app.database.db.collection('content'));
  });
  afterAll(() => app?.stop());

  it('shows a new post and drops a removed one without reading the author again', async () => {
    const content = app.database.db.collection('content');
    await content.insertOne({ ...byPostId(newPostId('steady')), _a: 'steady', _m: 'first', _d: new Date(Date.now() - 1000) });
    expect(await page('steady')).toEqual(['first']);
    const fresh = post('steady', Date.now());
    await content.insertOne({ _id: fresh.id, _a: 'steady', _m: fresh.body.text, _d: fresh.createdAt });
    outboxes.take(fresh);
    let shown: string[] = [];
    expect(await contentReads(async () => void (shown = await page('steady')))).toBe(0);
    expect(shown).toEqual([fresh.body.text, 'first']);
    outboxes.drop('steady', fresh.id);
    expect(await contentReads(async () => void (shown = await page('steady')))).toBe(0);
    expect(shown).toEqual(['first']);
  });

  it('does not show a post whose announcement arrives after its removal', async () => {
    const content = app.database.db.collection('content');
    await content.insertOne({ ...byPostId(newPostId('racer')), _a: 'racer', _m: 'kept', _d: new Date(Date.now() - 1000) });
    expect(await page('racer')).toEqual(['kept']);
    const gone = post('racer', Date.now());
    // Stored, deleted by another request, and only then announced.
    outboxes.drop('racer', gone.id);
    outboxes.take(gone);
    expect(await page('racer')).toEqual(['kept']);
  });

  it('takes the posts of other instances through their live events', async () => {
    const second = await startTestApp({ MONGODB_URI: app.mongodbUri });
    try {
      const token = await app.signUp('traveller');
      const ask = (target: TestApp) => target.services.content.pageByAuthors(['traveller'], newest);
      expect((await ask(second)).items).toEqual([]);
      const created = await app.gql('mutation { createPost(text: "from the first") { id } }', {}, token);
      const id = created.data.createPost.id as string;
      /** Once the second instance has heard what the first announced, its outbox page is `want`. */
      const arrived = async (want: string[]) => {
        await heardEverything(app, second);
        expect(texts((await ask(second)).items)).toEqual(want);
      };
      await arrived(['from the first']);
      const misses = second.services.content.outboxStats().misses;
      await app.gql(`mutation { deletePost(id: "${id}") }`, {}, token);
      await arrived([]);
      expect(second.services.content.outboxStats().misses).toBe(misses); // changed in place, never read again
    } finally {
      await second.stop();
    }
  });
});
