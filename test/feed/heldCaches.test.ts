import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { newBody, type PostRecord } from '../../src/records/posts.js';
import { TimelineCache, type CacheDocument } from '../../src/feed/strategies/timelineCache.js';
import { requestCommandNames, startTestApp, type TestApp } from '../support/testApp.js';

/**
 * The orderings the cache strategy's held copies guard, forced one by one on a backend of their
 * own that announces nothing: no live event can mend what the local rules miss.
 */
describe('the caches a process holds', () => {
  let app: TestApp;
  let backend: TimelineCache;
  let posts: PostRecord[];
  const authors = ['keeper', 'source'];
  /** A first page of two, from the cache alone: it holds more than that. */
  const newestTwo = async () =>
    (await backend.timeline('keeper', { direction: 'older', from: null, limit: 2 }, authors)).items.map((entry) => entry.body?.text);
  const hits = () => backend.cacheStats().hits;
  const post = async (text: string) => {
    const stored = app.services.content.preparePost('source', newBody(text), { pulled: false });
    await app.services.content.storePost(stored);
    return stored;
  };

  beforeAll(async () => {
    app = await startTestApp({ FEED_STRATEGY: 'cache', FANOUT_WORKERS: '0' });
    backend = new TimelineCache(app.database.db, app.services.content, loadConfig({ FEED_STRATEGY: 'cache' }).timeline, async () => {});
    posts = [];
    for (const text of ['one', 'two', 'three']) posts.push(await post(text));
    expect(await newestTwo()).toEqual(['three', 'two']); // builds the cache
  });
  afterAll(() => app?.stop());

  it('answers from its copy until its own write, then shows the write at once', async () => {
    expect(await newestTwo()).toEqual(['three', 'two']);
    const before = hits();
    expect(await newestTwo()).toEqual(['three', 'two']);
    expect(hits()).toBe(before + 1);
    const four = await post('four');
    await backend.deliverTo(['keeper'], [four]);
    expect(await newestTwo()).toEqual(['four', 'three']);
    await backend.removeFrom(['keeper'], four);
    expect(await newestTwo()).toEqual(['three', 'two']);
  });

  it('does not keep a copy whose load overlapped a change of that cache', async () => {
    backend.forgetHeld(['keeper']);
    const loading = newestTwo(); // the load has started
    backend.forgetHeld(['keeper']); // another instance's announcement arrives meanwhile
    expect(await loading).toEqual(['three', 'two']);
    // What that instance wrote: this process must read it, not the copy loaded before.
    const five = await post('five');
    await app.database.db.collection<CacheDocument>('timeline_cache').updateOne({ _id: 'keeper' }, { $push: { _c: { _id: five.id, _a: 'source', _d: five.createdAt, _m: 'five' } } });
    expect(await newestTwo()).toEqual(['five', 'three']);
  });

  it('reads the whole cache for a later page when it holds only a first page’s slice', async () => {
    backend.forgetHeld(['keeper']);
    expect(await newestTwo()).toEqual(['five', 'three']); // holds the newest three entries
    let older: Awaited<ReturnType<TimelineCache['timeline']>> | undefined;
    const commands = await app.commandsDuring(async () => {
      older = await backend.timeline('keeper', { direction: 'older', from: posts[1]!, limit: 2 }, authors);
    });
    expect(older!.items.map((entry) => entry.body?.text)).toEqual(['one']);
    expect(older!.hasMore).toBe(false);
    // The whole cache holds it, and knows nothing is below: one read of the cache, none of `content`.
    expect(requestCommandNames(commands)).toEqual(['find timeline_cache']);
  });

  it('holds the cache a read rebuilt for other authors, so the next page reads nothing', async () => {
    const followedMore = [...authors, 'newcomer'];
    const page = async () => (await backend.timeline('keeper', { direction: 'older', from: null, limit: 2 }, followedMore)).items.map((entry) => entry.body?.text);
    // Rebuilt from `content`, where 'four' is still stored (only the cache lost it above).
    expect(await page()).toEqual(['five', 'four']);
    const next = await app.commandsDuring(async () => expect(await page()).toEqual(['five', 'four']));
    expect(requestCommandNames(next).filter((command) => command.endsWith('timeline_cache'))).toEqual([]);
    const six = await post('six');
    await backend.deliverTo(['keeper'], [six]);
    expect(await page()).toEqual(['six', 'five']);
  });
});
