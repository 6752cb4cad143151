import { ObjectId } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seededRandom } from '../../bench/generate.js';
import { compareNewestFirst } from '../../src/content/position.js';
import { newBody, type EntryDocument } from '../../src/records/posts.js';
import { holding, wholeMark, type CacheDocument } from '../../src/feed/strategies/cacheDocument.js';
import { TimelineCache, withDelivered } from '../../src/feed/strategies/timelineCache.js';
import { heardEverything } from '../support/announcements.js';
import { startTestApp, type TestApp } from '../support/testApp.js';
import { internalId } from '../support/ids.js';

let made = 0;
const entry = (time: number): EntryDocument =>
  ({ _id: ObjectId.createFromHexString((made++).toString(16).padStart(24, '0')), _a: 'author', _d: new Date(time), _m: `at ${time}` }) as EntryDocument;
const oldestFirst = (a: EntryDocument, b: EntryDocument) => compareNewestFirst({ createdAt: b._d, id: b._id }, { createdAt: a._d, id: a._id });

/** What MongoDB does with the strategy's delivery: `$ne` and above-the-oldest-or-marked guard, then `$push` with `$sort` and `$slice`. */
function storedAfter(cache: CacheDocument, delivered: EntryDocument, cacheSize: number): CacheDocument {
  if (cache._c.some((present) => present._id.equals(delivered._id))) return cache;
  const oldest = cache._c[0];
  const above = oldest !== undefined && oldestFirst(oldest, delivered) < 0;
  if (!above && cache._e === undefined) return cache;
  return { ...cache, _c: [...cache._c, delivered].sort(oldestFirst).slice(-cacheSize) };
}

describe('a held cache taking deliveries in place', () => {
  it('holds what a fresh read of the document would give, in whatever order the deliveries are announced', () => {
    const random = seededRandom(5);
    for (let trial = 0; trial < 3000; trial++) {
      const cacheSize = 3 + Math.floor(random() * 10);
      const start = Array.from({ length: Math.floor(random() * (cacheSize + 1)) }, () => entry(Math.floor(random() * 40))).sort(oldestFirst);
      let stored: CacheDocument = { _id: 'reader', _c: start, _h: 'authors' };
      if (random() < 0.5) stored._e = wholeMark(start[0]?._id);
      // A first page reads the newest `newest` entries; a later page the whole document.
      const newest = random() < 0.5 ? 1 + Math.floor(random() * cacheSize) : null;
      const slice = (cache: CacheDocument): CacheDocument => (newest === null ? cache : { ...cache, _c: cache._c.slice(-newest) });
      let held = holding(slice(stored), newest);

      const deliveries = Array.from({ length: Math.floor(random() * 8) }, () => entry(Math.floor(random() * 60)));
      for (const delivered of deliveries) stored = storedAfter(stored, delivered, cacheSize);
      // Announcements arrive in any order, and some twice (this instance's own, echoed).
      const announced = [...deliveries].sort(() => random() - 0.5);
      for (const delivered of announced) {
        held = withDelivered(held, [delivered], cacheSize);
        if (random() < 0.2) held = withDelivered(held, [delivered], cacheSize);
      }
      // A copy of the whole document stays whole (and is the whole document); one of the newest entries, those.
      const fresh = held.whole ? holding(stored, null) : holding(slice(stored), newest);
      expect(held.cache._c.map((e) => e._m)).toEqual(fresh.cache._c.map((e) => e._m));
      expect(held.entries.map((e) => e.body?.text)).toEqual(fresh.entries.map((e) => e.body?.text));
      expect(held.whole || !fresh.whole).toBe(true);
    }
  });
});

describe('held caches of an instance that runs no fanout worker', () => {
  let app: TestApp;
  let second: TestApp;
  const tokens: Record<string, string> = {};
  const page = (target: TestApp, token: string) =>
    target.gql('{ timeline(first: 5) { edges { node { text } } } }', {}, token).then((result) => result.data.timeline.edges.map((edge: any) => edge.node.text));
  const cacheReads = async (target: TestApp, read: () => Promise<unknown>) =>
    (await target.commandsDuring(read)).filter((command) => command.commandName === 'find' && command.command.find === 'timeline_cache').length;
  /** Once `target` has heard everything the writing instance announced, its page is `want`. */
  const shows = async (target: TestApp, token: string, want: string[]) => {
    await heardEverything(app, target);
    expect(await page(target, token)).toEqual(want);
  };

  beforeAll(async () => {
    app = await startTestApp({ FEED_STRATEGY: 'cache' });
    second = await startTestApp({ FEED_STRATEGY: 'cache', FANOUT_WORKERS: '0', MONGODB_URI: app.mongodbUri });
    for (const handle of ['writer', 'reader']) tokens[handle] = await app.signUp(handle);
    await app.gql('mutation { follow(handle: "writer") { handle } }', {}, tokens.reader);
    await app.gql('mutation { createPost(text: "first") { id } }', {}, tokens.writer);
    await app.settled();
  });
  afterAll(async () => {
    await second?.stop();
    await app?.stop();
  });

  it('shows a post the other instance delivered without reading the cache again', async () => {
    await shows(second, tokens.reader!, ['first']);
    await page(second, tokens.reader!); // a first read builds the cache; the next one holds it
    expect(await cacheReads(second, () => page(second, tokens.reader!))).toBe(0); // held
    await app.gql('mutation { createPost(text: "second") { id } }', {}, tokens.writer);
    // The delivery's announcement has arrived: the held copy took the post in place.
    await heardEverything(app, second);
    let texts: string[] = [];
    expect(await cacheReads(second, async () => void (texts = await page(second, tokens.reader!)))).toBe(0);
    expect(texts).toEqual(['second', 'first']);
  });

  it('does not bring back a post whose delivery is announced after its removal', async () => {
    const { createPost } = (await app.gql('mutation { createPost(text: "gone soon") { id } }', {}, tokens.writer)).data;
    await app.settled();
    await shows(second, tokens.reader!, ['gone soon', 'second', 'first']);
    const backend = second.services.feed.backend;
    if (!(backend instanceof TimelineCache)) throw new Error('not the cache strategy');
    const post = { id: internalId(createPost.id), authorId: 'writer', createdAt: new Date(), pulled: false, replyTo: null, repostOf: null, counts: null, body: newBody('gone soon') };
    await app.gql(`mutation { deletePost(id: "${createPost.id}") }`, {}, tokens.writer);
    await app.settled();
    await shows(second, tokens.reader!, ['second', 'first']);
    // The delivery's own announcement, arriving only now.
    backend.forgetHeld(['reader'], { delivered: [{ recipients: ['reader'], posts: [post] }] });
    expect(await page(second, tokens.reader!)).toEqual(['second', 'first']);
  });
});
