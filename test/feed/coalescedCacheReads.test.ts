import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pageLoads } from '../../src/api/connections.js';
import { createLoaders } from '../../src/api/loaders.js';
import { requestCommandNames, startTestApp, type TestApp } from '../support/testApp.js';

const held = ['users', 'following', 'reader_filters'];
const readers = Array.from({ length: 12 }, (_, i) => `coalesced${i}`);
const writers = ['cwa', 'cwb', 'cwc', 'cwd'];

/**
 * Pages read at the same moment under the cache strategy share one query for their caches. Each
 * reader must still get exactly the page it gets alone: its own cache, cut to its own page size.
 */
describe('the cache strategy reading many readers’ caches at once', () => {
  let app: TestApp;
  const tokens = new Map<string, string>();
  // Readers follow different writers and ask for pages of different sizes, all inside their caches.
  const pageSizes = [1, 2, 3, 5, 4];
  const firstOf = (index: number) => pageSizes[index % pageSizes.length]!;
  const pageQuery = (first: number, after?: string) =>
    `{ timeline(first: ${first}${after ? `, after: "${after}"` : ''}) { edges { cursor node { text author { handle } } } pageInfo { hasNextPage } } }`;

  const followedBy = (index: number) => writers.filter((_, w) => (index >> w) & 1 || w === index % writers.length);

  const firstPages = () => Promise.all(readers.map((reader, index) => app.gql(pageQuery(firstOf(index)), {}, tokens.get(reader))));

  beforeAll(async () => {
    app = await startTestApp({ FEED_STRATEGY: 'cache', TIMELINE_CACHE_SIZE: '12' });
    for (const handle of [...readers, ...writers]) tokens.set(handle, await app.signUp(handle));
    for (const [index, reader] of readers.entries()) {
      for (const writer of followedBy(index)) {
        await app.gql(`mutation { follow(handle: "${writer}") { handle } }`, {}, tokens.get(reader));
      }
    }
    for (let i = 0; i < 5; i++) {
      for (const writer of writers) await app.gql(`mutation { createPost(text: "${writer} ${i}") { id } }`, {}, tokens.get(writer));
    }
    await app.settled();
    for (const reader of readers) await app.gql(pageQuery(1), {}, tokens.get(reader)); // builds each cache
  });
  afterAll(() => app?.stop());

  it('answers each concurrent first page as it answers that page alone, in one query for all', async () => {
    const alone = [];
    for (const [index, reader] of readers.entries()) alone.push(await app.gql(pageQuery(firstOf(index)), {}, tokens.get(reader)));
    expect(new Set(alone.map((page) => JSON.stringify(page.data.timeline))).size).toBeGreaterThan(6);
    expect(alone.map((page) => page.data.timeline.edges.length)).toEqual(readers.map((_, index) => firstOf(index)));

    const texts = (page: any) => page.data.timeline.edges.map((edge: any) => edge.node.text);
    const readTogether = () =>
      // Through the services in one turn, as requests that arrive together reach them (over HTTP
      // the sockets decide what arrives together).
      Promise.all(
        readers.map((reader, index) =>
          app.services.feed.timeline(reader, { direction: 'older', from: null, limit: firstOf(index) }, pageLoads(createLoaders(app.services, reader))),
        ),
      );
    let together: Awaited<ReturnType<typeof readTogether>> = [];
    // As an instance that holds none of these caches reads them: a warm page reads none.
    const commands = await app.warmCommandsDuring(async () => {
      app.services.feed.backend.forgetHeld(readers);
      together = await readTogether();
    }, [...held, 'content']);
    expect(requestCommandNames(commands)).toEqual(['find timeline_cache']);
    expect(together.map((page) => page.items.map((post) => post.body?.text))).toEqual(alone.map(texts));
    expect(together.map((page) => page.hasMore)).toEqual(alone.map((page) => page.data.timeline.pageInfo.hasNextPage));
  });

  it('answers later pages (whole caches) and first pages asked together, each its own', async () => {
    const firsts = await firstPages();
    const later = async () =>
      Promise.all(
        readers.map((reader, index) => {
          const edges = firsts[index]!.data.timeline.edges;
          return app.gql(pageQuery(3, edges.at(-1).cursor), {}, tokens.get(reader));
        }),
      );
    const laterAlone = [];
    app.services.feed.backend.forgetHeld(readers);
    for (const [index, reader] of readers.entries()) {
      laterAlone.push(await app.gql(pageQuery(3, firsts[index]!.data.timeline.edges.at(-1).cursor), {}, tokens.get(reader)));
    }
    app.services.feed.backend.forgetHeld(readers);
    const [laterTogether, firstsTogether] = await Promise.all([later(), firstPages()]);
    expect(laterTogether.map((page) => page.data.timeline)).toEqual(laterAlone.map((page) => page.data.timeline));
    expect(firstsTogether.map((page) => page.data.timeline)).toEqual(firsts.map((page) => page.data.timeline));
  });

  it('gives one reader asking several times at once the same page, and builds a missing cache once', async () => {
    const reader = readers[3]!;
    const alone = await app.gql(pageQuery(3), {}, tokens.get(reader));
    // As a reader back from a long absence: the cache goes, and every instance forgets its copy.
    await app.services.feed.backend.readerReturned(reader);
    expect(await app.database.db.collection('timeline_cache').countDocuments({ _id: reader as never })).toBe(0);
    const together = await Promise.all(Array.from({ length: 6 }, () => app.gql(pageQuery(3), {}, tokens.get(reader))));
    for (const page of together) expect(page.data.timeline).toEqual(alone.data.timeline);
    expect(await app.database.db.collection('timeline_cache').countDocuments({ _id: reader as never })).toBe(1);
  });

  it('reads what a post delivered a moment ago, with no answer kept from an earlier read', async () => {
    const before = await firstPages();
    await app.gql('mutation { createPost(text: "cwa fresh") { id } }', {}, tokens.get('cwa'));
    await app.settled();
    const after = await firstPages();
    for (const index of readers.keys()) {
      const newest = after[index]!.data.timeline.edges[0].node.text;
      expect(newest).toBe(followedBy(index).includes('cwa') ? 'cwa fresh' : before[index]!.data.timeline.edges[0].node.text);
    }
  });
});
