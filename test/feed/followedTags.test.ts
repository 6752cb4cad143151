import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { feedStrategies, timelineContentModes } from '../../src/config.js';
import { LiveClients, postAddedQuery, postRemovedQuery, Subscription, type PostEdge } from '../live/liveClient.js';
import { heardEverything } from '../support/announcements.js';
import { startTestApp, type TestApp } from '../support/testApp.js';
import { twoInstancesWithAFollowChain } from '../support/twoInstances.js';

/** Posts a followee's markers until the first arrives: from then on the subscription is routing. */
async function untilRouting(events: Subscription<PostEdge>, postMarker: (marker: number) => Promise<unknown>): Promise<void> {
  for (let marker = 0; events.results.length === 0 && marker < 50; marker++) {
    await postMarker(marker);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await events.waitFor(1);
}

const combinations = feedStrategies.flatMap((strategy) => timelineContentModes.map((content) => ({ strategy, content })));

/**
 * Followed tags in the home timeline: pulled at read time from the tag index in every strategy and
 * content mode, each post once, with the reader's mutes, blocks and filters, full pages both ways,
 * refresh and live updates; unfollowing a tag takes its posts away at once.
 */
describe.each(combinations)('followed tags: FEED_STRATEGY=$strategy TIMELINE_CONTENT=$content', ({ strategy, content }) => {
  let app: TestApp;
  const tokens: Record<string, string> = {};
  const live = new LiveClients(() => app, tokens);

  const ok = async (handle: string, query: string, variables: Record<string, unknown> = {}) => {
    const result = await app.gql(query, variables, tokens[handle]);
    if (result.errors) throw new Error(`${handle}: ${JSON.stringify(result.errors)}`);
    return result.data;
  };
  const post = async (handle: string, text: string, visibility = 'PUBLIC') =>
    (await ok(handle, 'mutation($text: String!, $v: Visibility) { createPost(text: $text, visibility: $v) { id } }', { text, v: visibility })).createPost.id as string;
  const page = async (args: string) => {
    await app.settled();
    return (await ok('rdr', `{ timeline(${args}) { edges { node { text } repostedBy { handle } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } } }`)).timeline;
  };
  const texts = (connection: any): string[] => connection.edges.map((edge: any) => (edge.repostedBy ? `${edge.repostedBy.handle} reposted: ` : '') + edge.node.text);

  beforeAll(async () => {
    // `pop` has more followers than the threshold: in the materialized strategies their posts are pulled too.
    app = await startTestApp({ FEED_STRATEGY: strategy, TIMELINE_CONTENT: content, FANOUT_PULL_THRESHOLD: '1' });
    for (const handle of ['rdr', 'fol', 'pop', 'far', 'mut', 'blk', 'xtr']) tokens[handle] = await app.signUp(handle);
    await ok('rdr', 'mutation { follow(handle: "fol") { handle } }');
    await ok('rdr', 'mutation { follow(handle: "pop") { handle } }');
    await ok('xtr', 'mutation { follow(handle: "pop") { handle } }');
    await ok('rdr', 'mutation { mute(handle: "mut") { handle } }');
    await ok('blk', 'mutation { block(handle: "rdr") { handle } }');
    await ok('rdr', 'mutation { addKeywordFilter(phrase: "spoiler") { phrase } }');
    await page('first: 5'); // timelines exist before the posts
    expect((await ok('rdr', 'mutation { followTag(tag: "#News") }')).followTag).toEqual(['news']);
    await post('fol', 'fol plain');
    await post('far', 'far #news 1');
    await post('mut', 'mut #news');
    await post('blk', 'blk #news');
    await post('far', 'far #news spoiler');
    await post('fol', 'fol #NEWS tagged');
    await post('far', 'far #news followers only', 'FOLLOWERS');
    await post('far', 'far #other');
    const shared = await post('far', 'far #news shared');
    await ok('fol', `mutation { repost(id: "${shared}") { id } }`);
    await post('pop', 'pop #news pulled');
    await post('far', 'far #news 2');
  }, 60_000);
  afterAll(async () => {
    await live.disposeAll();
    await app?.stop();
  });

  const expected = ['far #news 2', 'pop #news pulled', 'far #news shared', 'fol #NEWS tagged', 'far #news 1', 'fol plain'];

  it('shows public posts with a followed tag in place, once, under the reader\'s mutes, blocks and filters', async () => {
    expect(texts(await page('first: 50'))).toEqual(expected);
    // Pulled at read time: one indexed query for all the reader's tags, and the reader's timeline holds no stranger's tag post.
    const commands = await app.commandsDuring(() => page('first: 3'));
    expect(commands.filter((command) => command.commandName === 'find' && command.command.filter?._w !== undefined)).toHaveLength(1);
    for (const collection of ['timed_buckets', 'sized_buckets', 'timeline_cache']) {
      const readers = await app.database.db.collection<any>(collection).find({ $or: [{ '_id._u': 'rdr' }, { _u: 'rdr' }, { _id: 'rdr' }] }).toArray();
      const stored = JSON.stringify(readers);
      for (const text of ['far #news 1', 'far #news 2']) expect(stored).not.toContain(text);
    }
  });

  it('pages both ways with full pages and exact page info', async () => {
    const seen: string[] = [];
    let after: string | null = null;
    for (;;) {
      const current: any = await page(after ? `first: 2, after: "${after}"` : 'first: 2');
      seen.push(...texts(current));
      if (!current.pageInfo.hasNextPage) break;
      expect(current.edges).toHaveLength(2);
      after = current.pageInfo.endCursor;
    }
    expect(seen).toEqual(expected);
    const back = await page(`last: 3, before: "${after}"`);
    // `after` is the cursor of the last full page's end: the three posts before it.
    expect(texts(back)).toEqual(expected.slice(0, 3));
    expect(back.pageInfo).toMatchObject({ hasPreviousPage: false, hasNextPage: true });
  });

  it('brings new tagged posts with a refresh and live, and takes them away when the tag is unfollowed', async () => {
    const top = (await page('first: 1')).pageInfo.startCursor;
    const client = live.connect('rdr');
    const events = new Subscription<PostEdge>(client, postAddedQuery, 'timelinePostAdded');
    const removals = new Subscription<string>(client, postRemovedQuery, 'timelinePostRemoved');
    await untilRouting(events, (marker) => post('fol', `fol marker ${marker}`));
    const before = events.results.length;
    await post('far', 'far #news live');
    await post('far', 'far #other live');
    await post('mut', 'mut #news live');
    await post('fol', 'fol after live');
    const arrived = (await events.waitFor(before + 2)).slice(before).map((edge) => edge.node.text);
    expect(arrived).toEqual(['far #news live', 'fol after live']);
    const refreshed = texts(await page(`last: 20, before: "${top}"`));
    expect(refreshed.filter((text) => !text.startsWith('fol marker'))).toEqual(['fol after live', 'far #news live']);
    // Its deletion reaches the reader live too, though they do not follow its author.
    const doomed = await post('far', 'far #news doomed');
    await events.waitFor(before + 3);
    await ok('far', `mutation { deletePost(id: "${doomed}") }`);
    expect(await removals.waitFor(1)).toEqual([doomed]);

    expect((await ok('rdr', 'mutation { unfollowTag(tag: "NEWS") }')).unfollowTag).toEqual([]);
    // What is left comes through followed authors: pop's own post, fol's post and fol's repost (shown now that the original is not).
    expect(texts(await page('first: 50')).filter((text) => /#news/i.test(text))).toEqual(['pop #news pulled', 'fol reposted: far #news shared', 'fol #NEWS tagged']);
    // The open subscription rereads the tags once it hears the unfollow's announcement: waited for in order, where
    // a fixed 300 ms sleep could be too short on a loaded machine (its one read starts before the marker is even sent).
    await heardEverything(app);
    const count = events.results.length;
    await post('far', 'far #news unfollowed');
    await post('fol', 'fol last');
    const last = (await events.waitFor(count + 1)).slice(count).map((edge) => edge.node.text);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect([...last, ...events.results.slice(count + 1).map((edge) => edge.node.text)]).toEqual(['fol last']);

    // Following it again reaches the open subscription too, without reconnecting.
    await ok('rdr', 'mutation { followTag(tag: "news") }');
    await heardEverything(app); // as above: the follow's announcement heard, the tags reread
    const again = events.results.length;
    await post('far', 'far #news followed again');
    expect((await events.waitFor(again + 1)).slice(again).map((edge) => edge.node.text)).toEqual(['far #news followed again']);
  });
});

/**
 * A reader's tags change on one instance while their live subscription is open on another: the
 * other instance learns it only from the change's announcement, as its own copy of the reader
 * would otherwise keep routing the tag until it expires.
 */
describe('followed tags on two instances', () => {
  const instances = twoInstancesWithAFollowChain('cache');
  const live = new LiveClients(() => instances.b, instances.tokens);
  afterAll(() => live.disposeAll());

  it('stops and starts routing a tag to a subscription on the other instance once it has heard the change', async () => {
    const { a, b, tokens } = instances;
    const post = async (handle: string, text: string) => {
      const result = await a.gql('mutation($text: String!) { createPost(text: $text) { id } }', { text }, tokens[handle]);
      expect(result.errors).toBeUndefined();
    };
    const tag = async (mutation: 'followTag' | 'unfollowTag') => {
      const result = await a.gql(`mutation { ${mutation}(tag: "news") }`, {}, tokens.cal);
      expect(result.errors).toBeUndefined();
    };
    // Received after `count`, up to and including the post with text `last` (posted last, by a followee).
    const arrivedUpTo = async (count: number, last: string) => {
      for (let seen = count + 1; ; seen++) {
        const texts = (await events.waitFor(seen)).slice(count).map((edge) => edge.node.text);
        if (texts.at(-1) === last) return texts;
      }
    };
    await tag('followTag');
    const events = new Subscription<PostEdge>(live.connect('cal'), postAddedQuery, 'timelinePostAdded');
    await untilRouting(events, (marker) => post('bea', `bea marker ${marker}`));

    // ada is not followed by cal: only the tag brings ada's post.
    let count = events.results.length;
    await post('ada', 'ada #news followed');
    await post('bea', 'bea after followed');
    expect(await arrivedUpTo(count, 'bea after followed')).toEqual(['ada #news followed', 'bea after followed']);

    await tag('unfollowTag');
    await heardEverything(a, b);
    count = events.results.length;
    await post('ada', 'ada #news unfollowed');
    await post('bea', 'bea after unfollowed');
    // A tag post still routed would come before the followee's later post, which the same stream carries.
    expect(await arrivedUpTo(count, 'bea after unfollowed')).toEqual(['bea after unfollowed']);

    await tag('followTag');
    await heardEverything(a, b);
    count = events.results.length;
    await post('ada', 'ada #news followed again');
    await post('bea', 'bea after followed again');
    expect(await arrivedUpTo(count, 'bea after followed again')).toEqual(['ada #news followed again', 'bea after followed again']);
  });
});

describe('following tags', () => {
  let app: TestApp;
  let token: string;
  beforeAll(async () => {
    app = await startTestApp();
    token = await app.signUp('tagger');
  });
  afterAll(() => app?.stop());

  it('keeps them in order, idempotent, at most 100, refusing tags no post could have', async () => {
    const follow = (tag: string) => app.gql('mutation($tag: String!) { followTag(tag: $tag) }', { tag }, token);
    expect((await follow('#Café')).data.followTag).toEqual(['café']);
    expect((await follow('CAFÉ')).data.followTag).toEqual(['café']);
    for (let i = 1; i < 100; i++) await follow(`tag${i}`);
    expect((await follow('one_too_many')).errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect((await follow('tag5')).data.followTag).toHaveLength(100);
    const followed = (await app.gql('{ followedTags }', {}, token)).data.followedTags;
    expect(followed.slice(0, 3)).toEqual(['café', 'tag1', 'tag2']);
    expect((await follow('a b')).errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect((await app.gql('mutation { unfollowTag(tag: "tag1") }', {}, token)).data.unfollowTag).toHaveLength(99);
    expect((await app.gql('{ followedTags }', {})).errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
  });
});
