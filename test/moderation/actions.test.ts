import type { Client } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { liveClient, subscribePostAdded, subscribePostRemoved, subscriptionsOpen } from '../live/liveClient.js';
import { answersAs, startTestApp, type TestApp } from '../support/testApp.js';

const strategies = ['fanout-on-read', 'time-buckets', 'sized-buckets', 'cache'] as const;
const reportMutation = `mutation($h: String!, $p: ID, $r: ReportReason!) { report(handle: $h, postId: $p, reason: $r) { id } }`;
const resolveMutation = `mutation($id: ID!, $a: ModerationAction!) { resolveReport(id: $id, action: $a) { state resolution } }`;

describe.each(strategies)('staff actions: %s', (strategy) => {
  let app: TestApp;
  const tokens: Record<string, string> = {};
  const ok = answersAs(() => app, tokens);
  const timeline = async (handle: string) => (await ok(handle, '{ timeline { edges { node { text repostCount likeCount author { handle } } repostedBy { handle } } } }')).timeline.edges;
  const counts = async (handle: string) => (await ok('mod', `{ user(handle: "${handle}") { followerCount followingCount } }`)).user;

  beforeAll(async () => {
    app = await startTestApp({ FEED_STRATEGY: strategy, STAFF_HANDLES: 'mod' });
    for (const handle of ['mod', 'auth', 'fan', 'pal', 'bad']) tokens[handle] = await app.signUp(handle);
    for (const fan of ['fan', 'pal']) await ok(fan, 'mutation { follow(handle: "auth") { handle } }');
    await ok('fan', 'mutation { follow(handle: "bad") { handle } }');
    await ok('bad', 'mutation { follow(handle: "auth") { handle } }');
    await ok('bad', 'mutation { follow(handle: "pal") { handle } }');
  });
  afterAll(() => app?.stop());

  it('REMOVE_POST removes the post like its author would, live included, and tells the author why', async () => {
    const post = (await ok('auth', 'mutation { createPost(text: "against the rules") { id } }')).createPost.id;
    await ok('pal', `mutation { likePost(id: "${post}") { id } }`);
    await app.settled();
    expect((await timeline('fan')).map((edge: any) => edge.node.text)).toContain('against the rules');
    const client = liveClient(app, tokens.fan!);
    const removed = subscribePostRemoved(client);
    await subscriptionsOpen(app, 1);
    const report = (await ok('pal', reportMutation, { h: 'auth', p: post, r: 'ABUSE' })).report.id;
    const other = (await ok('fan', reportMutation, { h: 'auth', p: post, r: 'SPAM' })).report.id;
    expect((await ok('mod', resolveMutation, { id: report, a: 'REMOVE_POST' })).resolveReport).toEqual({ state: 'RESOLVED', resolution: 'REMOVE_POST' });
    expect(await removed.waitFor(1)).toEqual([post]);
    await client.dispose();
    await app.settled();
    for (const reader of ['fan', 'pal', 'auth']) expect((await timeline(reader)).map((edge: any) => edge.node.text)).not.toContain('against the rules');
    expect((await ok('pal', `{ post(id: "${post}") { id } }`)).post).toBeNull();
    // The author is told, and why; the post's like notification went with it.
    const told = (await ok('auth', '{ notifications { edges { node { kind removalReason post { id } } } } }')).notifications.edges.map((edge: any) => edge.node);
    expect(told.find((node: any) => node.kind === 'POST_REMOVED')).toEqual({ kind: 'POST_REMOVED', removalReason: 'ABUSE', post: null });
    expect(told.filter((node: any) => node.kind === 'LIKE')).toEqual([]);
    // The other open report of the post was answered by the removal; the author's own delete now finds nothing.
    const resolved = (await ok('mod', '{ reports(state: RESOLVED) { edges { node { id resolution } } } }')).reports.edges.map((edge: any) => edge.node);
    expect(resolved).toEqual(expect.arrayContaining([{ id: other, resolution: 'REMOVE_POST' }]));
    expect((await app.gql(`mutation { deletePost(id: "${post}") }`, {}, tokens.auth)).errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    const audit = await app.database.db.collection<any>('audit_log').findOne({ what: 'RESOLVE_REPORT', action: 'REMOVE_POST' });
    expect(audit).toMatchObject({ who: 'mod', account: 'auth' });
    expect(audit.post.toHexString()).toBeTruthy();
  });

  it('SUSPEND_ACCOUNT signs the account out, refuses its log-in and hides it, its posts, reposts, likes and follows from every count; unsuspending brings back exactly', async () => {
    const original = (await ok('auth', 'mutation { createPost(text: "liked and reposted") { id } }')).createPost.id;
    await ok('bad', 'mutation { createPost(text: "by the suspended") { id } }');
    await ok('bad', `mutation { likePost(id: "${original}") { id } }`);
    await ok('bad', `mutation { repost(id: "${original}") { id } }`);
    await ok('fan', `mutation { likePost(id: "${original}") { id } }`);
    await app.settled();
    const before = { auth: await counts('auth'), pal: await counts('pal'), fan: await counts('fan') };
    expect(before).toEqual({ auth: { followerCount: 3, followingCount: 0 }, pal: { followerCount: 1, followingCount: 1 }, fan: { followerCount: 0, followingCount: 2 } });
    const fanTimeline = await timeline('fan');
    expect(fanTimeline.map((edge: any) => edge.node.text)).toEqual(expect.arrayContaining(['by the suspended', 'liked and reposted']));
    expect(fanTimeline.find((edge: any) => edge.node.text === 'liked and reposted').node).toMatchObject({ likeCount: 2, repostCount: 1 });

    const report = (await ok('pal', reportMutation, { h: 'bad', r: 'ABUSE' })).report.id;
    await ok('mod', resolveMutation, { id: report, a: 'SUSPEND_ACCOUNT' });
    // Signed out everywhere, log-in refused with its own code (a wrong password stays a wrong log-in).
    expect((await app.gql('{ viewer { handle } }', {}, tokens.bad)).data?.viewer ?? null).toBeNull();
    expect((await app.gql('mutation { createPost(text: "still here?") { id } }', {}, tokens.bad)).errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    const logIn = (password: string) => app.gql(`mutation { logIn(handle: "bad", password: "${password}") { token } }`);
    expect((await logIn('correct horse battery')).errors?.[0]?.extensions?.code).toBe('ACCOUNT_SUSPENDED');
    expect((await logIn('wrong horse battery')).errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    // Hidden from everyone: profile, posts, reposts, and its effects on counts once the queue has run.
    await app.settled();
    expect((await ok('fan', '{ user(handle: "bad") { handle } }')).user).toBeNull();
    expect((await ok('fan', '{ searchUsers(query: "ba") { handle } }')).searchUsers).toEqual([]);
    const hiddenTimeline = await timeline('fan');
    expect(hiddenTimeline.map((edge: any) => edge.node.text)).not.toContain('by the suspended');
    expect(hiddenTimeline.filter((edge: any) => edge.repostedBy?.handle === 'bad')).toEqual([]);
    expect(hiddenTimeline.find((edge: any) => edge.node.text === 'liked and reposted').node).toMatchObject({ likeCount: 1, repostCount: 0 });
    expect({ auth: await counts('auth'), pal: await counts('pal'), fan: await counts('fan') }).toEqual({
      auth: { followerCount: 2, followingCount: 0 },
      pal: { followerCount: 0, followingCount: 1 },
      fan: { followerCount: 0, followingCount: 1 },
    });
    const followers = (await ok('auth', '{ user(handle: "auth") { followers { edges { node { handle } } } } }')).user.followers.edges.map((edge: any) => edge.node.handle);
    expect(followers).toEqual(['fan', 'pal']);
    expect((await app.gql('mutation { follow(handle: "bad") { handle } }', {}, tokens.pal)).errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    // Staff still see the account in its report.
    expect((await ok('mod', `query($id: ID!) { node(id: $id) { ... on Report { account { handle } } } }`, { id: report })).node.account.handle).toBe('bad');
    // Nothing was deleted: unsuspending brings back exactly what there was.
    expect((await app.gql('mutation { unsuspendAccount(handle: "bad") { handle } }', {}, tokens.pal)).errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect((await app.gql('mutation { unsuspendAccount(handle: "nobody_here") { handle } }', {}, tokens.mod)).errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    expect((await ok('mod', 'mutation { unsuspendAccount(handle: "bad") { handle } }')).unsuspendAccount.handle).toBe('bad');
    await app.settled();
    expect({ auth: await counts('auth'), pal: await counts('pal'), fan: await counts('fan') }).toEqual(before);
    const back = await timeline('fan');
    expect(back.map((edge: any) => edge.node.text)).toEqual(expect.arrayContaining(['by the suspended', 'liked and reposted']));
    expect(back.find((edge: any) => edge.node.text === 'liked and reposted').node).toMatchObject({ likeCount: 2, repostCount: 1 });
    const token = (await logIn('correct horse battery')).data.logIn.token;
    expect((await app.gql('{ viewer { handle } }', {}, token)).data.viewer.handle).toBe('bad');
    const entries = await app.database.db.collection<any>('audit_log').find({ account: 'bad' }).sort({ at: 1 }).toArray();
    expect(entries.map((entry) => [entry.what, entry.action ?? null])).toEqual([
      ['RESOLVE_REPORT', 'SUSPEND_ACCOUNT'],
      ['UNSUSPEND_ACCOUNT', null],
    ]);
  });
});

/** A suspension signs the account out on every instance, over HTTP and WebSocket. */
describe('a suspension across two instances', () => {
  let a: TestApp;
  let b: TestApp;
  const clients: Client[] = [];

  beforeAll(async () => {
    a = await startTestApp({ STAFF_HANDLES: 'boss' });
    b = await startTestApp({ MONGODB_URI: a.mongodbUri, STAFF_HANDLES: 'boss' });
  });
  afterAll(async () => {
    await Promise.all(clients.map((client) => client.dispose()));
    await b?.stop();
    await a?.stop();
  });

  it('closes its live connections with 4403 and refuses its tokens on both', async () => {
    const boss = await a.signUp('boss');
    const spammer = await a.signUp('spammer');
    const witness = await a.signUp('witness');
    expect((await b.gql('{ viewer { handle } }', {}, spammer)).data.viewer.handle).toBe('spammer');
    const open = (app: TestApp, token: string) => {
      const client = liveClient(app, token);
      clients.push(client);
      return subscribePostAdded(client);
    };
    const onA = open(a, spammer);
    const onB = open(b, spammer);
    const bystander = open(b, witness);
    await subscriptionsOpen(a, 1);
    await subscriptionsOpen(b, 2);
    const report = (await a.gql(reportMutation, { h: 'spammer', r: 'SPAM' }, witness)).data.report.id;
    await b.gql(resolveMutation, { id: report, a: 'SUSPEND_ACCOUNT' }, boss);
    const closed = (subscription: typeof onA) =>
      Promise.race([subscription.ended, new Promise((_, reject) => setTimeout(() => reject(new Error('still open')), 20_000))]);
    expect(await closed(onA)).toMatchObject({ code: 4403 });
    expect(await closed(onB)).toMatchObject({ code: 4403 });
    for (const app of [a, b]) {
      expect((await app.gql('{ timeline(first: 1) { edges { cursor } } }', {}, spammer)).errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
      expect((await app.gql('{ user(handle: "spammer") { handle } }', {}, witness)).data.user).toBeNull();
    }
    expect(bystander.errors).toEqual([]);
  });
});
