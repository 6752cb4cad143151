import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { feedStrategies } from '../../src/config.js';
import { answersAs, startTestApp, type TestApp } from '../support/testApp.js';

const pageQuery = `
  query($id: ID!, $first: Int, $after: String, $last: Int, $before: String) {
    list(id: $id) {
      timeline(first: $first, after: $after, last: $last, before: $before) {
        edges { cursor repostedBy { handle } node { text author { handle } } }
        pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
      }
    }
  }`;

/** What a reader sees of an edge: the text, and who reposted it when it came by a repost. */
const shown = (edge: any) => (edge.repostedBy ? `${edge.node.text} (by ${edge.repostedBy.handle})` : edge.node.text);

// Lists do not depend on the timeline strategy; two of them show it.
describe.each(feedStrategies.filter((strategy) => strategy === 'fanout-on-read' || strategy === 'cache'))('a list timeline with %s', (strategy) => {
  let app: TestApp;
  let listId: string;
  const tokens: Record<string, string> = {};
  const ok = answersAs(() => app, tokens);
  const post = async (handle: string, text: string, replyTo?: string): Promise<string> =>
    (await ok(handle, 'mutation($t: String!, $r: ID) { createPost(text: $t, replyTo: $r) { id } }', { t: text, r: replyTo ?? null })).createPost.id;
  const page = async (variables: Record<string, unknown>) => (await ok('owner', pageQuery, { id: listId, ...variables })).list.timeline;

  /** Every page of `size`, older first from the top, then newer from the bottom: both must give `expected`. */
  async function walkBothWays(size: number): Promise<{ older: string[]; newer: string[]; pageSizes: number[] }> {
    const older: string[] = [];
    const pageSizes: number[] = [];
    let after: string | null = null;
    let bottom: string | null = null;
    for (let guard = 0; guard < 50; guard++) {
      const current: any = await page({ first: size, after });
      older.push(...current.edges.map(shown));
      pageSizes.push(current.edges.length);
      expect(current.pageInfo.hasPreviousPage).toBe(after !== null);
      if (current.edges.length > 0) bottom = current.pageInfo.endCursor;
      if (!current.pageInfo.hasNextPage) break;
      after = current.pageInfo.endCursor;
    }
    // From the oldest post, newer pages back to the top; each page is newest first.
    const newer: string[] = [];
    const oldest = older.at(-1)!;
    let before: string | null = bottom;
    for (let guard = 0; guard < 50; guard++) {
      const current: any = await page({ last: size, before });
      newer.unshift(...current.edges.map(shown));
      if (!current.pageInfo.hasPreviousPage) break;
      before = current.pageInfo.startCursor;
    }
    newer.push(oldest);
    return { older, newer, pageSizes };
  }

  beforeAll(async () => {
    app = await startTestApp({ FEED_STRATEGY: strategy });
    for (const handle of ['owner', 'ann', 'ben', 'cat', 'dan']) tokens[handle] = await app.signUp(handle);
    for (const other of ['ann', 'ben', 'cat', 'dan']) await ok('owner', 'mutation($h: String!) { follow(handle: $h) { handle } }', { h: other });
    listId = (await ok('owner', 'mutation { createList(name: "friends") { id } }')).createList.id;
    for (const member of ['ann', 'ben', 'cat']) {
      await ok('owner', 'mutation($id: ID!, $h: String!) { addToList(id: $id, handle: $h) { id } }', { id: listId, h: member });
    }
    await ok('owner', 'mutation { addKeywordFilter(phrase: "spoiler") { id } }');

    const a1 = await post('ann', 'a1');
    const d1 = await post('dan', 'd1');
    const b1 = await post('ben', 'b1 spoiler');
    await post('cat', 'c1');
    const o1 = await post('owner', 'o1');
    await ok('ann', 'mutation($id: ID!) { repost(id: $id) { id } }', { id: d1 });
    await ok('ben', 'mutation($id: ID!) { repost(id: $id) { id } }', { id: a1 });
    await post('cat', 'c2 to dan', d1);
    await post('cat', 'c3 to owner', o1);
    await post('ann', 'a2 to ben', b1);
    for (let i = 0; i < 12; i++) await post('ben', `spoiler ${i}`);
    for (let i = 3; i <= 7; i++) await post('ann', `a${i}`);
    await app.settled();
  });
  afterAll(() => app?.stop());

  // Newest first: the members' posts and reposts; not the owner's, not dan's (no member), not a
  // reply to dan, not ben's repost of a1 (a1 shows itself), nothing with the filtered phrase.
  const expected = ['a7', 'a6', 'a5', 'a4', 'a3', 'a2 to ben', 'c3 to owner', 'd1 (by ann)', 'c1', 'a1'];

  it.each([1, 2, 3, 4, 20])('pages of %i: the same posts both ways, full pages, exact hasNextPage', async (size) => {
    const { older, newer, pageSizes } = await walkBothWays(size);
    expect(older).toEqual(expected);
    expect(newer).toEqual(expected);
    // Twelve filtered posts sit between a3 and "a2 to ben": no page is short while older posts exist.
    expect(pageSizes.slice(0, -1).every((count) => count === size)).toBe(true);
    expect(pageSizes.at(-1)).toBe(expected.length % size || size);
  });

  it('follows the owner’s mutes and the list’s members at once', async () => {
    await ok('owner', 'mutation { mute(handle: "cat") { handle } }');
    expect((await page({ first: 20 })).edges.map(shown)).toEqual(expected.filter((text) => !text.startsWith('c')));
    await ok('owner', 'mutation { unmute(handle: "cat") { handle } }');
    await ok('owner', 'mutation($id: ID!) { removeFromList(id: $id, handle: "ann") { id } }', { id: listId });
    expect((await page({ first: 20 })).edges.map(shown)).toEqual(['c3 to owner', 'a1 (by ben)', 'c1']);
    await ok('owner', 'mutation($id: ID!) { addToList(id: $id, handle: "ann") { id } }', { id: listId });
    expect((await page({ first: 20 })).edges.map(shown)).toEqual(expected);
  });

  it('drops a member the owner unfollows at once, and a new follow does not bring them back', async () => {
    await ok('owner', 'mutation { unfollow(handle: "cat") { handle } }');
    const withoutCat = expected.filter((text) => !text.startsWith('c'));
    expect((await page({ first: 20 })).edges.map(shown)).toEqual(withoutCat);
    await ok('owner', 'mutation { follow(handle: "cat") { handle } }');
    expect((await page({ first: 20 })).edges.map(shown)).toEqual(withoutCat);
    await ok('owner', 'mutation($id: ID!) { addToList(id: $id, handle: "cat") { id } }', { id: listId });
    expect((await page({ first: 20 })).edges.map(shown)).toEqual(expected);
  });

  it('gives a post the cursor the home timeline gives it', async () => {
    const home = (await ok('owner', '{ timeline(first: 30) { edges { cursor node { text } } } }')).timeline.edges;
    const list = (await page({ first: 20 })).edges;
    for (const edge of list.filter((e: any) => !e.repostedBy)) {
      expect(home.find((e: any) => e.node.text === edge.node.text)?.cursor).toBe(edge.cursor);
    }
  });
});
