import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answersAs, requestCommandNames, startTestApp, type TestApp } from '../support/testApp.js';

const strategies = ['fanout-on-read', 'time-buckets', 'sized-buckets', 'cache'] as const;

const stateOf = `query($h: String!) { user(handle: $h) { locked viewerFollowState viewerIsFollowing followerCount followingCount } }`;
const requestsQuery = `query($first: Int, $after: String) { followRequests(first: $first, after: $after) { totalCount edges { cursor node { handle } } pageInfo { hasNextPage endCursor } } }`;

describe('follow requests of a locked account', () => {
  let app: TestApp;
  const tokens: Record<string, string> = {};
  const ok = answersAs(() => app, tokens);
  const errorCode = async (handle: string, query: string, variables: Record<string, unknown> = {}) =>
    (await app.gql(query, variables, tokens[handle])).errors?.[0]?.extensions?.code;
  const edges = async (follower: string, followee: string) => ({
    following: await app.database.db.collection('following').countDocuments({ _f: follower, _t: followee }),
    followers: await app.database.db.collection('followers').countDocuments({ _f: followee, _t: follower }),
  });
  const requesters = async (handle: string) => (await ok(handle, requestsQuery)).followRequests.edges.map((edge: any) => edge.node.handle);
  const lock = (handle: string, locked: boolean) => ok(handle, 'mutation($l: Boolean) { updateProfile(locked: $l) { locked } }', { l: locked });

  beforeAll(async () => {
    app = await startTestApp();
    for (const handle of ['lola', 'fred', 'gus', 'hal', 'ida', 'jon']) tokens[handle] = await app.signUp(handle);
    expect((await lock('lola', true)).updateProfile.locked).toBe(true);
  });
  afterAll(() => app?.stop());

  it('makes a follow a request: REQUESTED, no edge, no count, a FOLLOW_REQUEST notification', async () => {
    const followed = await ok('fred', 'mutation { follow(handle: "lola") { viewerFollowState viewerIsFollowing followerCount } }');
    expect(followed.follow).toEqual({ viewerFollowState: 'REQUESTED', viewerIsFollowing: false, followerCount: 0 });
    // Asking again changes nothing and tells nobody twice.
    await ok('fred', 'mutation { follow(handle: "lola") { handle } }');
    expect(await edges('fred', 'lola')).toEqual({ following: 0, followers: 0 });
    expect((await ok('fred', stateOf, { h: 'fred' })).user).toMatchObject({ followingCount: 0 });
    expect(await requesters('lola')).toEqual(['fred']);
    await app.settled();
    const notifications = await ok('lola', '{ notifications { edges { node { kind actors { handle } post { id } } } } }');
    expect(notifications.notifications.edges.map((edge: any) => edge.node)).toEqual([{ kind: 'FOLLOW_REQUEST', actors: [{ handle: 'fred' }], post: null }]);
    // Nobody else sees the request; signed out, the state is NONE.
    expect((await ok('gus', stateOf, { h: 'lola' })).user.viewerFollowState).toBe('NONE');
    expect((await app.gql(stateOf, { h: 'lola' })).data.user.viewerFollowState).toBe('NONE');
  });

  it('approves a request into a follow with its counts and edges; approving again is NOT_FOUND', async () => {
    const approved = await ok('lola', 'mutation { approveFollowRequest(handle: "fred") { handle } }');
    expect(approved.approveFollowRequest.handle).toBe('fred');
    expect(await edges('fred', 'lola')).toEqual({ following: 1, followers: 1 });
    expect((await ok('fred', stateOf, { h: 'lola' })).user).toMatchObject({ viewerFollowState: 'FOLLOWING', viewerIsFollowing: true, followerCount: 1 });
    expect(await requesters('lola')).toEqual([]);
    expect(await errorCode('lola', 'mutation { approveFollowRequest(handle: "fred") { handle } }')).toBe('NOT_FOUND');
    expect(await errorCode('lola', 'mutation { approveFollowRequest(handle: "gus") { handle } }')).toBe('NOT_FOUND');
    expect(await errorCode('lola', 'mutation { rejectFollowRequest(handle: "nobody_here") { handle } }')).toBe('NOT_FOUND');
    // A follower following again changes nothing.
    expect((await ok('fred', 'mutation { follow(handle: "lola") { viewerFollowState } }')).follow.viewerFollowState).toBe('FOLLOWING');
  });

  it('removes a request silently on rejection, on the requester unfollowing, and on a block either way', async () => {
    await ok('gus', 'mutation { follow(handle: "lola") { handle } }');
    await ok('hal', 'mutation { follow(handle: "lola") { handle } }');
    await ok('ida', 'mutation { follow(handle: "lola") { handle } }');
    await ok('jon', 'mutation { follow(handle: "lola") { handle } }');
    expect(await requesters('lola')).toEqual(['gus', 'hal', 'ida', 'jon']);
    // Paged oldest first with cursors.
    const first = (await ok('lola', requestsQuery, { first: 3 })).followRequests;
    expect(first.totalCount).toBe(4);
    expect(first.pageInfo.hasNextPage).toBe(true);
    const rest = (await ok('lola', requestsQuery, { first: 3, after: first.pageInfo.endCursor })).followRequests;
    expect(rest.edges.map((edge: any) => edge.node.handle)).toEqual(['jon']);
    const back = (await ok('lola', `query($before: String) { followRequests(last: 2, before: $before) { edges { node { handle } } pageInfo { hasPreviousPage } } }`, { before: rest.edges[0].cursor })).followRequests;
    expect(back.edges.map((edge: any) => edge.node.handle)).toEqual(['hal', 'ida']);
    expect(back.pageInfo.hasPreviousPage).toBe(true);

    await ok('lola', 'mutation { rejectFollowRequest(handle: "gus") { handle } }');
    await ok('hal', 'mutation { unfollow(handle: "lola") { handle } }');
    await ok('lola', 'mutation { block(handle: "ida") { handle } }');
    await ok('jon', 'mutation { block(handle: "lola") { handle } }');
    expect(await requesters('lola')).toEqual([]);
    for (const handle of ['gus', 'hal']) expect((await ok(handle, stateOf, { h: 'lola' })).user.viewerFollowState).toBe('NONE');
    expect(await errorCode('lola', 'mutation { approveFollowRequest(handle: "hal") { handle } }')).toBe('NOT_FOUND');
    expect((await ok('lola', stateOf, { h: 'lola' })).user.followerCount).toBe(1);
    await ok('lola', 'mutation { unblock(handle: "ida") { handle } }');
    await ok('jon', 'mutation { unblock(handle: "lola") { handle } }');
  });

  it('shows a locked account\'s follower and following lists to its followers only', async () => {
    const lists = `query($h: String!) { user(handle: $h) { followerCount followers { totalCount edges { node { handle } } } following { edges { node { handle } } } } }`;
    await ok('lola', 'mutation { follow(handle: "jon") { handle } }');
    const asFollower = (await ok('fred', lists, { h: 'lola' })).user;
    expect(asFollower.followers.edges.map((edge: any) => edge.node.handle)).toEqual(['fred']);
    expect(asFollower.following.edges.map((edge: any) => edge.node.handle)).toEqual(['jon']);
    expect((await ok('lola', lists, { h: 'lola' })).user.followers.edges).toHaveLength(1);
    for (const viewer of ['gus', null]) {
      const hidden = viewer ? (await ok(viewer, lists, { h: 'lola' })).user : (await app.gql(lists, { h: 'lola' })).data.user;
      expect(hidden).toMatchObject({ followerCount: 1, followers: { totalCount: 1, edges: [] }, following: { edges: [] } });
    }
    await ok('lola', 'mutation { unfollow(handle: "jon") { handle } }');
  });

  it('approves every waiting request through the queue when the account is unlocked', async () => {
    for (const handle of ['gus', 'hal', 'ida']) await ok(handle, 'mutation { follow(handle: "lola") { handle } }');
    expect(await requesters('lola')).toEqual(['gus', 'hal', 'ida']);
    // A bad display name beside the unlock changes nothing and queues nothing.
    expect(await errorCode('lola', 'mutation($d: String) { updateProfile(displayName: $d, locked: false) { locked } }', { d: 'x'.repeat(51) })).toBe('BAD_USER_INPUT');
    expect(await app.database.db.collection('fanout_tasks').countDocuments({ kind: 'approve-requests' })).toBe(0);
    expect((await ok('lola', stateOf, { h: 'lola' })).user.locked).toBe(true);
    await lock('lola', false);
    const deadline = Date.now() + 10_000;
    while ((await ok('lola', stateOf, { h: 'lola' })).user.followerCount < 4) {
      if (Date.now() > deadline) throw new Error('the unlock did not approve the requests');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(await requesters('lola')).toEqual([]);
    for (const handle of ['gus', 'hal', 'ida']) expect((await ok(handle, stateOf, { h: 'lola' })).user.viewerFollowState).toBe('FOLLOWING');
    // Unlocked, a follow is a follow at once.
    expect((await ok('jon', 'mutation { follow(handle: "lola") { viewerFollowState } }')).follow.viewerFollowState).toBe('FOLLOWING');
  });

  it('lets only the requested account approve; following oneself is BAD_USER_INPUT, an unknown account NOT_FOUND', async () => {
    await lock('gus', true);
    expect(await errorCode('gus', 'mutation { follow(handle: "gus") { handle } }')).toBe('BAD_USER_INPUT');
    await ok('hal', 'mutation { follow(handle: "gus") { handle } }');
    // Only the requested account approves: fred approving hal's request of gus finds nothing of his.
    expect(await errorCode('fred', 'mutation { approveFollowRequest(handle: "hal") { handle } }')).toBe('NOT_FOUND');
    expect(await requesters('gus')).toEqual(['hal']);
    expect(await errorCode('fred', 'mutation { follow(handle: "nobody_at_all") { handle } }')).toBe('NOT_FOUND');
  });
});

describe('what a request and an approval cost', () => {
  let app: TestApp;
  const tokens: Record<string, string> = {};

  beforeAll(async () => {
    app = await startTestApp({ FANOUT_WORKERS: '0' });
    for (const handle of ['keeper', 'seeker', 'warmer']) tokens[handle] = await app.signUp(handle);
    await app.gql('mutation { updateProfile(locked: true) { locked } }', {}, tokens.keeper);
    // What a signed-in reader's requests find held: their user, their filters, the followee.
    await app.gql('mutation { follow(handle: "keeper") { handle } }', {}, tokens.warmer);
    await app.gql('mutation { follow(handle: "warmer") { handle } }', {}, tokens.seeker);
  });
  afterAll(() => app?.stop());

  it('a request is six commands and an approval nine, about a follow', async () => {
    const request = requestCommandNames(await app.commandsDuring(() => app.gql('mutation { follow(handle: "keeper") { handle } }', {}, tokens.seeker)));
    // The rate limit, the followee read, the request, the lock read again, the notification, the answer's user.
    expect(request.length).toBeLessThanOrEqual(6);
    expect(request.filter((command) => command.startsWith('findAndModify follow_pairs'))).toHaveLength(1);
    const approval = requestCommandNames(await app.commandsDuring(() => app.gql('mutation { approveFollowRequest(handle: "seeker") { handle } }', {}, tokens.keeper)));
    // A follow's own writes (the pair's wish and finish, both counts, both edges, the group) and two reads.
    expect(approval.length).toBeLessThanOrEqual(9);
  });
});

describe('requests racing approvals, rejections, unfollows and blocks', () => {
  let app: TestApp;
  const tokens: Record<string, string> = {};
  const fans = Array.from({ length: 12 }, (_, i) => `fan_${String(i).padStart(2, '0')}`);

  beforeAll(async () => {
    app = await startTestApp();
    for (const handle of ['star', ...fans]) tokens[handle] = await app.signUp(handle);
    await app.gql('mutation { updateProfile(locked: true) { locked } }', {}, tokens.star);
  });
  afterAll(() => app?.stop());

  it('ends exact: no follow without an approval that came after a request, counts equal to edges', async () => {
    const send = (handle: string, mutation: string) => app.gql(`mutation { ${mutation} { handle } }`, {}, tokens[handle]);
    const approvedAnswers = new Set<string>();
    // Each fan asks, and meanwhile the star approves, rejects, and the fan takes back, in every order, many times.
    for (let round = 0; round < 4; round++) {
      await Promise.all(
        fans.flatMap((fan, index) => {
          const approve = send('star', `approveFollowRequest(handle: "${fan}")`).then((result) => {
            if (!result.errors) approvedAnswers.add(fan);
            else expect(result.errors[0]!.extensions?.code).toBe('NOT_FOUND');
          });
          const steps: Promise<unknown>[] = [send(fan, 'follow(handle: "star")'), approve, send(fan, 'follow(handle: "star")')];
          if (index % 3 === 0) steps.push(send('star', `rejectFollowRequest(handle: "${fan}")`));
          if (index % 4 === 1) steps.push(send(fan, 'unfollow(handle: "star")'));
          if (round === 2 && index % 5 === 2) steps.push(send('star', `block(handle: "${fan}")`).then(() => send('star', `unblock(handle: "${fan}")`)));
          return steps;
        }),
      );
    }
    const db = app.database.db;
    await app.settled();
    const pairs = await db.collection<any>('follow_pairs').find({ t: 'star' }).toArray();
    const followers = (await db.collection<any>('followers').find({ _f: 'star' }).toArray()).map((edge) => edge._t).sort();
    const following = (await db.collection<any>('following').find({ _t: 'star' }).toArray()).map((edge) => edge._f).sort();
    expect(following).toEqual(followers);
    expect(pairs.filter((pair) => pair.want).map((pair) => pair.f).sort()).toEqual(followers);
    // No follow without an approval that answered; a request and a follow never stand together.
    for (const follower of followers) expect(approvedAnswers.has(follower)).toBe(true);
    expect(pairs.filter((pair) => pair.want && pair.rq)).toEqual([]);
    expect(pairs.filter((pair) => pair.dirty || pair.lease !== null)).toEqual([]);
    const star = await db.collection<any>('users').findOne({ _id: 'star' });
    expect(star.followerCount).toBe(followers.length);
    for (const fan of fans) {
      const user = await db.collection<any>('users').findOne({ _id: fan });
      expect(user.followingCount).toBe(following.includes(fan) ? 1 : 0);
    }
    // Every request left is shown, every follow is FOLLOWING.
    const waiting = pairs.filter((pair) => pair.rq).map((pair) => pair.f).sort();
    expect(followers.length).toBeGreaterThan(0); // some approvals won their races
    const shown = (await app.gql(requestsQuery, { first: 100 }, tokens.star)).data.followRequests.edges.map((edge: any) => edge.node.handle).sort();
    expect(shown).toEqual(waiting);
    // What is left still works: approving every waiting request makes them followers.
    for (const fan of waiting) expect((await send('star', `approveFollowRequest(handle: "${fan}")`)).errors).toBeUndefined();
    expect((await db.collection<any>('users').findOne({ _id: 'star' })).followerCount).toBe(followers.length + waiting.length);
  }, 60_000);

  it('a request deleted with its requester\'s account leaves nothing waiting', async () => {
    const handle = 'short_lived';
    tokens[handle] = await app.signUp(handle);
    await app.gql('mutation { follow(handle: "star") { handle } }', {}, tokens[handle]);
    await app.gql('mutation { deleteAccount(password: "correct horse battery") }', {}, tokens[handle]);
    const shown = (await app.gql(requestsQuery, { first: 100 }, tokens.star)).data.followRequests.edges.map((edge: any) => edge.node.handle);
    expect(shown).not.toContain(handle);
    expect(await app.database.db.collection('follow_pairs').countDocuments({ f: handle })).toBe(0);
  });

  it('a locked account deleted with requests waiting leaves none, and its handle starts clean', async () => {
    const handle = 'locked_gone';
    tokens[handle] = await app.signUp(handle);
    await app.gql('mutation { updateProfile(locked: true) { locked } }', {}, tokens[handle]);
    for (const fan of fans.slice(0, 3)) await app.gql(`mutation { follow(handle: "${handle}") { handle } }`, {}, tokens[fan]);
    expect((await app.gql(requestsQuery, {}, tokens[handle])).data.followRequests.totalCount).toBe(3);
    await app.gql('mutation { deleteAccount(password: "correct horse battery") }', {}, tokens[handle]);
    expect(await app.database.db.collection('follow_pairs').countDocuments({ t: handle })).toBe(0);
    const again = await app.signUp(handle);
    expect((await app.gql(requestsQuery, {}, again)).data.followRequests.totalCount).toBe(0);
    expect((await app.gql(`{ user(handle: "${handle}") { locked viewerFollowState } }`, {}, tokens[fans[0]!])).data.user).toEqual({ locked: false, viewerFollowState: 'NONE' });
  });
});

describe.each(strategies)('an approved request in the timeline: %s', (strategy) => {
  let app: TestApp;
  const tokens: Record<string, string> = {};
  const ok = answersAs(() => app, tokens);
  const timelineTexts = async (handle: string) => (await ok(handle, '{ timeline { edges { node { text } } } }')).timeline.edges.map((edge: any) => edge.node.text);

  beforeAll(async () => {
    app = await startTestApp({ FEED_STRATEGY: strategy });
    for (const handle of ['priv', 'asker']) tokens[handle] = await app.signUp(handle);
    await ok('priv', 'mutation { updateProfile(locked: true) { locked } }');
    await ok('priv', 'mutation { createPost(text: "public before") { id } }');
    await ok('priv', 'mutation { createPost(text: "followers only", visibility: FOLLOWERS) { id } }');
  });
  afterAll(() => app?.stop());

  it('brings nothing while waiting, and the public and followers-only posts once approved', async () => {
    await ok('asker', 'mutation { follow(handle: "priv") { handle } }');
    await app.settled();
    expect(await timelineTexts('asker')).toEqual([]);
    const authored = async () => (await ok('asker', '{ user(handle: "priv") { posts { edges { node { text } } } } }')).user.posts.edges.map((edge: any) => edge.node.text);
    expect(await authored()).toEqual(['public before']);
    await ok('priv', 'mutation { approveFollowRequest(handle: "asker") { handle } }');
    await app.settled();
    expect(await timelineTexts('asker')).toEqual(['followers only', 'public before']);
    await ok('priv', 'mutation { createPost(text: "after approval") { id } }');
    await app.settled();
    expect(await timelineTexts('asker')).toEqual(['after approval', 'followers only', 'public before']);
    expect(await authored()).toEqual(['after approval', 'followers only', 'public before']);
  });
});
