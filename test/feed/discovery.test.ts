import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { discoveryIndex } from '../../src/content/discoveryScans.js';
import { searchQuery } from '../../src/records/searchTokens.js';
import { publicOnly } from '../../src/records/posts.js';
import { requestCommandNames, startTestApp, type TestApp } from '../support/testApp.js';

/**
 * Finding posts through the public API: tag timelines, post search and trending tags, with who may
 * see what (docs/visibility.md) and the viewer's mutes, blocks and keyword filters.
 */
describe('discovery', () => {
  let app: TestApp;
  const tokens: Record<string, string> = {};

  const gql = (handle: string | null, query: string, variables: Record<string, unknown> = {}) => app.gql(query, variables, handle === null ? undefined : tokens[handle]);
  const ok = async (handle: string | null, query: string, variables: Record<string, unknown> = {}) => {
    const result = await gql(handle, query, variables);
    if (result.errors) throw new Error(`${handle}: ${JSON.stringify(result.errors)}`);
    return result.data;
  };
  const code = async (handle: string | null, query: string, variables: Record<string, unknown> = {}) => (await gql(handle, query, variables)).errors?.[0]?.extensions?.code ?? null;
  const post = async (handle: string, text: string, visibility = 'PUBLIC') =>
    (await ok(handle, 'mutation($text: String!, $v: Visibility) { createPost(text: $text, visibility: $v) { id tags } }', { text, v: visibility })).createPost as { id: string; tags: string[] };
  const texts = (connection: any): string[] => connection.edges.map((edge: any) => edge.node.text);
  const tagPage = async (viewer: string | null, tag: string, args = 'first: 50') => (await ok(viewer, `query($tag: String!) { tagTimeline(tag: $tag, ${args}) { edges { cursor node { text } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } } }`, { tag })).tagTimeline;
  const search = async (viewer: string | null, query: string, args = 'first: 50') =>
    (await ok(viewer, `query($q: String!) { searchPosts(query: $q, ${args}) { edges { cursor node { text } } pageInfo { hasNextPage endCursor } } }`, { q: query })).searchPosts;

  beforeAll(async () => {
    app = await startTestApp();
    for (const handle of ['ann', 'bob', 'cyd', 'dee', 'eve', 'gone']) tokens[handle] = await app.signUp(handle);
    await ok('bob', 'mutation { follow(handle: "ann") { handle } }');
  }, 60_000);
  afterAll(() => app?.stop());

  it('gives a post its tags, normalised, in order, and a tag page its public posts newest first', async () => {
    const first = await post('ann', 'Morning #Café in #東京2026');
    expect(first.tags).toEqual(['café', '東京2026']);
    await post('bob', 'another #CAFÉ, see https://example.org/#café');
    await post('ann', 'followers only #café', 'FOLLOWERS');
    await post('cyd', 'no tag: café');
    await post('dee', 'a#café is no tag');
    expect(texts(await tagPage(null, '#café'))).toEqual(['another #CAFÉ, see https://example.org/#café', 'Morning #Café in #東京2026']);
    // Limited posts never show on a tag page, not even to their audience.
    expect(texts(await tagPage('bob', 'CAFÉ'))).toEqual(['another #CAFÉ, see https://example.org/#café', 'Morning #Café in #東京2026']);
    expect(texts(await tagPage('eve', '東京2026'))).toEqual(['Morning #Café in #東京2026']);
  });

  it('pages a tag both ways like the timeline, full pages past muted, blocked and filtered posts', async () => {
    for (let i = 1; i <= 9; i++) await post(['ann', 'bob', 'cyd'][i % 3]!, `paged #walk ${i}${i % 3 === 1 ? ' spoiler' : ''}`);
    await ok('eve', 'mutation { mute(handle: "cyd") { handle } }');
    await ok('eve', 'mutation { addKeywordFilter(phrase: "spoiler") { phrase } }');
    // eve mutes cyd's posts (i % 3 == 2) and filters bob's (i % 3 == 1): ann's are left, 9, 6, 3.
    const first = await tagPage('eve', 'walk', 'first: 2');
    expect(texts(first)).toEqual(['paged #walk 9 ', 'paged #walk 6 '].map((text) => text.trim()));
    expect(first.pageInfo.hasNextPage).toBe(true);
    const second = await tagPage('eve', 'walk', `first: 2, after: "${first.pageInfo.endCursor}"`);
    expect(texts(second)).toEqual(['paged #walk 3']);
    expect(second.pageInfo.hasNextPage).toBe(false);
    const back = await tagPage('eve', 'walk', `last: 2, before: "${second.pageInfo.startCursor}"`);
    expect(texts(back)).toEqual(['paged #walk 9', 'paged #walk 6']);
    expect(back.pageInfo.hasPreviousPage).toBe(false);
    await ok('dee', 'mutation { block(handle: "ann") { handle } }');
    expect(texts(await tagPage('dee', 'walk', 'first: 3'))).toEqual(['paged #walk 8', 'paged #walk 7 spoiler', 'paged #walk 5']);
    expect(texts(await tagPage(null, 'walk', 'first: 3'))).toEqual(['paged #walk 9', 'paged #walk 8', 'paged #walk 7 spoiler']);
  });

  it('refuses a cursor of another connection, and tags no post could have', async () => {
    const home = (await ok('bob', '{ timeline(first: 1) { pageInfo { endCursor } } }')).timeline.pageInfo.endCursor;
    const walk = (await tagPage(null, 'walk', 'first: 1')).pageInfo.endCursor;
    expect(await code(null, `{ tagTimeline(tag: "walk", after: "${home}") { edges { cursor } } }`)).toBe('BAD_USER_INPUT');
    expect(await code(null, `{ tagTimeline(tag: "café", after: "${walk}") { edges { cursor } } }`)).toBe('BAD_USER_INPUT');
    expect(await code(null, `{ searchPosts(query: "walk", after: "${walk}") { edges { cursor } } }`)).toBe('BAD_USER_INPUT');
    const searched = (await search(null, 'paged', 'first: 1')).pageInfo.endCursor;
    expect(await code(null, `{ searchPosts(query: "walk", after: "${searched}") { edges { cursor } } }`)).toBe('BAD_USER_INPUT');
    const next = await search(null, 'paged', `first: 1, after: "${searched}"`);
    expect(next.edges).toHaveLength(1);
    // Back towards the newest, like the timeline's `last`/`before`.
    const newest = (await search(null, 'paged', 'first: 1')).edges[0].node.text;
    expect(texts(await search(null, 'paged', `last: 5, before: "${next.pageInfo.endCursor}"`))).toEqual([newest]);
    expect(await code(null, '{ searchPosts(query: "x", last: 51) { edges { cursor } } }')).toBe('BAD_USER_INPUT');
    for (const tag of ['', '#', 'two words', '12', '\u0000x', '#'.repeat(5000)]) {
      expect(await code(null, 'query($tag: String!) { tagTimeline(tag: $tag) { edges { cursor } } }', { tag })).toBe('BAD_USER_INPUT');
    }
  });

  it('searches words case- and accent-insensitively, every word, and Chinese by any run of two or more characters', async () => {
    await post('ann', 'Un Café très NOIR');
    await post('bob', '如何为社交feed场景设计缓存体系');
    await post('cyd', '缓存和存体 are apart');
    await post('dee', '日本語のテキスト検索');
    await post('eve', '한국어 검색 테스트');
    expect(texts(await search(null, 'cafe noir'))).toEqual(['Un Café très NOIR']);
    expect(texts(await search(null, 'CAFÉ tres'))).toEqual(['Un Café très NOIR']);
    expect(texts(await search(null, 'cafe blanc'))).toEqual([]);
    expect(texts(await search(null, '缓存'))).toEqual(['缓存和存体 are apart', '如何为社交feed场景设计缓存体系']);
    expect(texts(await search(null, '缓存体系'))).toEqual(['如何为社交feed场景设计缓存体系']);
    expect(texts(await search(null, '社交 FEED'))).toEqual(['如何为社交feed场景设计缓存体系']);
    expect(texts(await search(null, '缓存体'))).toEqual(['如何为社交feed场景设计缓存体系']);
    expect(texts(await search(null, 'テキスト'))).toEqual(['日本語のテキスト検索']);
    expect(texts(await search(null, '검색'))).toEqual(['한국어 검색 테스트']);
  });

  it('finds only what the viewer may see: public, their own, followers-only of whom they follow, mentioned to them', async () => {
    await post('ann', 'secret zebra for followers', 'FOLLOWERS');
    await post('ann', 'secret zebra for @cyd', 'MENTIONED');
    await post('ann', 'secret zebra for all');
    const seen = async (viewer: string | null) => texts(await search(viewer, 'secret zebra')).sort();
    expect(await seen('ann')).toEqual(['secret zebra for @cyd', 'secret zebra for all', 'secret zebra for followers']);
    expect(await seen('bob')).toEqual(['secret zebra for all', 'secret zebra for followers']);
    expect(await seen('cyd')).toEqual(['secret zebra for @cyd', 'secret zebra for all']);
    expect(await seen('eve')).toEqual(['secret zebra for all']);
    expect(await seen(null)).toEqual(['secret zebra for all']);
    await ok('eve', 'mutation { mute(handle: "ann") { handle } }');
    expect(await seen('eve')).toEqual([]);
  });

  it('keeps search pages full past what the viewer does not see, and forgets deleted posts and accounts at once', async () => {
    for (let i = 0; i < 6; i++) await post(i % 2 === 0 ? 'gone' : 'cyd', `quokka ${i}`);
    const pageOf = async (viewer: string) => texts(await search(viewer, 'quokka', 'first: 2'));
    // eve muted cy: gone's posts fill her pages.
    expect(await pageOf('eve')).toEqual(['quokka 4', 'quokka 2']);
    const doomed = await post('gone', 'quokka doomed');
    expect(await pageOf('bob')).toEqual(['quokka doomed', 'quokka 5']);
    await ok('gone', `mutation { deletePost(id: "${doomed.id}") }`);
    expect(await pageOf('bob')).toEqual(['quokka 5', 'quokka 4']);
    await ok('gone', 'mutation { deleteAccount(password: "correct horse battery") }');
    expect(await pageOf('bob')).toEqual(['quokka 5', 'quokka 3']);
    expect(await pageOf('eve')).toEqual([]);
  });

  it('finds an edited post by its new words and tags only, and shows its new tags', async () => {
    const edited = await post('eve', 'draft about #Osaka ramen');
    const done = await ok('eve', 'mutation($id: ID!, $text: String!) { editPost(id: $id, text: $text) { tags } }', { id: edited.id, text: 'final about #Kyoto soba' });
    expect(done.editPost.tags).toEqual(['kyoto']);
    expect(texts(await search('ann', 'soba'))).toEqual(['final about #Kyoto soba']);
    expect(texts(await search('ann', 'ramen'))).toEqual([]);
    expect(texts(await tagPage('ann', 'kyoto'))).toEqual(['final about #Kyoto soba']);
    expect(texts(await tagPage('ann', 'osaka'))).toEqual([]);
  });

  it('refuses blank, over-long and undisplayable queries, and answers hostile ones quickly', async () => {
    for (const query of ['', '   ', 'x'.repeat(201), 'a\u0000b', '\ud800', '!!!']) {
      expect(await code(null, 'query($q: String!) { searchPosts(query: $q) { edges { cursor } } }', { q: query }), JSON.stringify(query)).toBe('BAD_USER_INPUT');
    }
    expect(await code(null, '{ searchPosts(query: "x", first: 51) { edges { cursor } } }')).toBe('BAD_USER_INPUT');
    const started = performance.now();
    // Refused (no word) or answered, each at once: at most 8 tokens reach the index.
    for (const query of ['#'.repeat(200), '缓'.repeat(200), 'a '.repeat(100), '缓存'.repeat(100), 'é'.repeat(200)]) {
      const result = await gql(null, 'query($q: String!) { searchPosts(query: $q) { edges { cursor } } }', { q: query });
      expect(result.errors?.[0]?.extensions?.code ?? 'answered').toMatch(/answered|BAD_USER_INPUT/);
    }
    // Milliseconds each on an idle machine; 10 s gives a loaded one room and still catches a query that runs away.
    expect(performance.now() - started).toBeLessThan(10_000);
  });

  it('ranks trending tags by distinct accounts over the last day: one account posting a tag many times counts once', async () => {
    for (let i = 0; i < 5; i++) await post('dee', `#spam again ${i}`);
    await post('ann', '#rising one');
    await post('bob', '#rising two');
    await post('cyd', '#rising three');
    await post('dee', '#Rising four');
    await post('cyd', 'limited #rising', 'FOLLOWERS');
    // The queue counts them, moments after the posts.
    await app.settled();
    const trends = (await ok(null, '{ trendingTags(first: 50) { tag accounts posts } }')).trendingTags;
    expect(trends[0]).toEqual({ tag: 'rising', accounts: 4, posts: 4 });
    expect(trends.find((trend: any) => trend.tag === 'spam')).toEqual({ tag: 'spam', accounts: 1, posts: 5 });
    expect((await ok(null, '{ trendingTags(first: 1) { tag } }')).trendingTags).toEqual([{ tag: 'rising' }]);
    expect(await code(null, '{ trendingTags(first: 51) { tag } }')).toBe('BAD_USER_INPUT');
  });

  it('costs one query per tag page or search page on a warm process, two when filters leave the first batch short', async () => {
    const held = ['users', 'reader_filters', 'following'];
    const tagCommands = requestCommandNames(await app.warmCommandsDuring(() => tagPage('bob', 'walk', 'first: 2'), held));
    expect(tagCommands).toEqual(['find content']);
    // eve hides two posts in three of this tag: the page reads on once, with a larger batch.
    const filteredCommands = requestCommandNames(await app.warmCommandsDuring(() => tagPage('eve', 'walk', 'first: 2'), held));
    expect(filteredCommands).toEqual(['find content', 'find content']);
    const searchCommands = requestCommandNames(await app.warmCommandsDuring(() => search('bob', 'secret zebra', 'first: 2'), held));
    expect(searchCommands).toEqual(['find content']);
  });

  it('serves tag pages and searches from the discovery index', async () => {
    const content = app.database.db.collection('content');
    const request = { direction: 'older' as const, from: null, limit: 20 };
    const scans = app.services.content.discovery;
    // The query shapes MongoDB's planner walks the `{ _w, _d, _id }` index with: an equality on
    // one token at the top level, the page order of the index, and the index named as the hint.
    expect(scans.tagFilter(['#walk'], request)).toEqual({ _w: '#walk', ...publicOnly });
    // The longest token leads (likelier rare); the others are `$all` of the same index.
    const filter = scans.searchFilter(searchQuery('缓存体系 feed')!, publicOnly, request);
    expect(filter).toEqual({ _w: 'feed', $and: [publicOnly, { _w: { $all: ['缓存', '存体', '体系'] } }] });
    const indexes = await content.indexes();
    expect(indexes.find((index) => index.name === discoveryIndex)?.key).toEqual({ _w: 1, _d: -1, _id: -1 });
    const commands = await app.commandsDuring(() => tagPage(null, 'walk', 'first: 2'));
    const find = commands.find((command) => command.commandName === 'find' && command.command.filter?._w !== undefined)!;
    expect(find.command.hint).toBe(discoveryIndex);
    expect(Object.fromEntries(find.command.sort)).toEqual({ _d: -1, _id: -1 });
    // MongoDB's planner: an index scan of `discovery_newest_first` that also gives the order (no
    // SORT stage, no collection scan). The embedded database has no `explain` (its index narrows the
    // same top-level equality without a planner: docs/discovery.md), so there the shapes above are the proof.
    const plans = [
      app.services.content.content.find({ _w: '#walk', ...publicOnly }, { hint: discoveryIndex }).sort({ _d: -1, _id: -1 }).limit(21),
      app.services.content.content.find(filter, { hint: discoveryIndex }).sort({ _d: -1, _id: -1 }).limit(21),
    ];
    for (const cursor of plans) {
      const plan = await cursor.explain().catch((error) => {
        if ((error as { code?: number }).code === 59) return null; // no such command: the embedded database
        throw error;
      });
      if (plan === null) continue;
      const stages = stagesOf(plan.queryPlanner.winningPlan);
      expect(stages.map((stage) => stage.stage)).toContain('IXSCAN');
      expect(stages.filter((stage) => stage.stage === 'IXSCAN').map((stage) => stage.indexName)).toEqual([discoveryIndex]);
      expect(stages.map((stage) => stage.stage)).not.toContain('COLLSCAN');
      expect(stages.map((stage) => stage.stage)).not.toContain('SORT');
    }
  });
});

/** Every stage of a query plan, the winning plan's tree flattened (also under the SBE `queryPlan`). */
function stagesOf(plan: any): { stage: string; indexName?: string }[] {
  if (!plan || typeof plan !== 'object') return [];
  const node = plan.queryPlan ?? plan;
  return [{ stage: node.stage, indexName: node.indexName }, ...stagesOf(node.inputStage), ...(node.inputStages ?? []).flatMap(stagesOf)];
}
