import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { maxReadEdges, maxSampledFollowees, type SuggestionMethod } from '../../src/graph/followSuggestions.js';
import { answersAs, requestCommands, startTestApp, type TestApp } from '../support/testApp.js';

const methods: SuggestionMethod[] = ['queries', 'aggregation'];
const suggestionsQuery = 'query($n: Int) { suggestedFollows(first: $n) { user { handle } mutualCount followedBy(first: 2) { handle } } }';

describe('suggested follows', () => {
  let app: TestApp;
  const tokens: Record<string, string> = {};
  const ok = answersAs(() => app, tokens);
  const follow = (handle: string, ...others: string[]) =>
    Promise.all(others.map((other) => ok(handle, 'mutation($h: String!) { follow(handle: $h) { handle } }', { h: other })));

  beforeAll(async () => {
    app = await startTestApp();
    const handles = ['viewer', 'fan1', 'fan2', 'fan3', 'xavi', 'yuki', 'zane', 'walt', 'muted', 'blocked', 'blocker', 'leaving', 'popular_fan'];
    for (const handle of handles) tokens[handle] = await app.signUp(handle);
    await follow('viewer', 'fan1', 'fan2', 'fan3');
    await follow('fan1', 'xavi', 'yuki', 'zane', 'viewer', 'fan2');
    await follow('fan2', 'xavi', 'yuki', 'blocked', 'muted');
    await follow('fan3', 'xavi', 'zane', 'blocker', 'leaving', 'walt');
    // zane and yuki are followed by two of the viewer's followees each; zane has more followers.
    await follow('popular_fan', 'zane');
    await ok('viewer', 'mutation { mute(handle: "muted") { handle } }');
    await ok('viewer', 'mutation { block(handle: "blocked") { handle } }');
    await ok('blocker', 'mutation { block(handle: "viewer") { handle } }');
    // An account being deleted is gone for every read from the start, before its follows end.
    await app.database.db.collection('users').updateOne({ _id: 'leaving' as never }, { $set: { deletedAt: new Date() } });
    app.services.users.forgetAll();
  });
  afterAll(() => app?.stop());

  const expected = [
    { user: { handle: 'xavi' }, mutualCount: 3, followedBy: [{ handle: 'fan1' }, { handle: 'fan2' }] },
    { user: { handle: 'zane' }, mutualCount: 2, followedBy: [{ handle: 'fan1' }, { handle: 'fan3' }] },
    { user: { handle: 'yuki' }, mutualCount: 2, followedBy: [{ handle: 'fan1' }, { handle: 'fan2' }] },
    { user: { handle: 'walt' }, mutualCount: 1, followedBy: [{ handle: 'fan3' }] },
  ];

  it('ranks friends of friends by how many followees follow them, then by followers; never the viewer, followed, muted, blocked or deleted', async () => {
    expect((await ok('viewer', suggestionsQuery, { n: 10 })).suggestedFollows).toEqual(expected);
    expect((await ok('viewer', suggestionsQuery, { n: 2 })).suggestedFollows).toEqual(expected.slice(0, 2));
    const all = (await ok('viewer', '{ suggestedFollows { followedBy(first: 100) { handle } } }')).suggestedFollows;
    expect(all[0].followedBy.map((user: any) => user.handle)).toEqual(['fan1', 'fan2', 'fan3']);
  });

  it.each(methods)('gives the same answer by %s', async (method) => {
    const answer = await app.services.suggestions.suggestBy(method, 'viewer', 10);
    expect(answer.map(({ userId, mutualCount }) => [userId, mutualCount])).toEqual(expected.map((s) => [s.user.handle, s.mutualCount]));
  });

  it('follows what the viewer does next, and refuses bad sizes', async () => {
    await follow('viewer', 'xavi');
    expect((await ok('viewer', suggestionsQuery, { n: 10 })).suggestedFollows.map((s: any) => s.user.handle)).toEqual(['zane', 'yuki', 'walt']);
    await ok('viewer', 'mutation { unfollow(handle: "xavi") { handle } }');
    expect((await ok('fan1', '{ suggestedFollows { user { handle } } }')).suggestedFollows).toEqual(
      expect.arrayContaining([{ user: { handle: 'blocked' } }, { user: { handle: 'muted' } }]),
    );
    expect((await ok('walt', '{ suggestedFollows { user { handle } } }')).suggestedFollows).toEqual([]);
    for (const n of [0, 101]) expect((await app.gql(suggestionsQuery, { n }, tokens.viewer)).errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect((await app.gql(suggestionsQuery, {})).errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
  });
});

describe('suggested follows for a viewer following 5,000 accounts among 100,000 users', () => {
  let app: TestApp;
  let token: string;
  const users = Array.from({ length: 100_000 }, (_, i) => `u${i}`);
  const followees = users.slice(0, 5000);

  beforeAll(async () => {
    app = await startTestApp();
    token = await app.signUp('viewer');
    const db = app.database.db;
    const now = new Date();
    // Followees follow 10 accounts each outside the viewer's follows, skewed towards low numbers (a few popular ones).
    let seed = 7;
    const random = () => ((seed = (seed * 16807) % 2147483647) - 1) / 2147483646;
    const edges: { _f: string; _t: string }[] = followees.map((handle) => ({ _f: 'viewer', _t: handle }));
    for (const handle of followees) {
      const targets = new Set<string>();
      while (targets.size < 10) targets.add(users[5000 + Math.floor(random() ** 3 * 95_000)]!);
      for (const target of targets) edges.push({ _f: handle, _t: target });
    }
    const followerCounts = new Map<string, number>();
    for (const edge of edges) followerCounts.set(edge._t, (followerCounts.get(edge._t) ?? 0) + 1);
    for (let start = 0; start < users.length; start += 20_000) {
      await db.collection('users').insertMany(
        users.slice(start, start + 20_000).map((handle) => ({
          _id: handle as never, accountId: handle, displayName: null, passwordHash: '-', createdAt: now, followerCount: followerCounts.get(handle) ?? 0, followingCount: 0,
        })),
      );
    }
    await db.collection('following').insertMany(edges.map(({ _f, _t }) => ({ _f, _t })));
    await db.collection('followers').insertMany(edges.map(({ _f, _t }) => ({ _f: _t, _t: _f })));
    app.services.graph.invalidateAll();
  }, 300_000);
  afterAll(() => app?.stop());

  it('answers in a bounded number of queries, reading a bounded sample, with exact counts', async () => {
    let result: any;
    const commands = requestCommands(
      await app.commandsDuring(async () => {
        result = await app.gql('{ suggestedFollows(first: 20) { user { handle } mutualCount followedBy(first: 100) { handle } } }', {}, token);
      }),
    );
    expect(result.errors).toBeUndefined();
    const suggestions = result.data.suggestedFollows;
    expect(suggestions).toHaveLength(20);
    // Authentication, the follow list, the filters, the sampled edges, the candidates' users, the exact counts, the shown users.
    expect(commands.length).toBeLessThanOrEqual(8);
    const edgeRead = commands.find((command) => command.command.find === 'following' && command.command.filter._f?.$in);
    expect(edgeRead!.command.filter._f.$in).toHaveLength(maxSampledFollowees);
    expect(edgeRead!.command.limit).toBe(maxReadEdges);

    const followed = new Set(followees);
    const db = app.database.db;
    for (const suggestion of suggestions) {
      expect(followed.has(suggestion.user.handle) || suggestion.user.handle === 'viewer').toBe(false);
      const exact = await db.collection('followers').countDocuments({ _f: suggestion.user.handle, _t: { $in: followees } });
      expect(suggestion.mutualCount).toBe(exact);
      expect(suggestion.followedBy).toHaveLength(Math.min(exact, 100));
    }
    const counts = suggestions.map((s: any) => s.mutualCount);
    expect(counts).toEqual([...counts].sort((x, y) => y - x));
  });
});
