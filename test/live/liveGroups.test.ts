import type { Client } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChangeEvent } from '../../src/changes/events.js';
import { LiveGroup, partitionOf } from '../../src/changes/partitions.js';
import { createPost, follow, like, unlike } from '../notifications/support.js';
import { internalHex } from '../support/ids.js';
import { startTestApp, type TestApp } from '../support/testApp.js';
import { eventually, liveClient, subscribePostAdded, Subscription } from './liveClient.js';

interface LiveNotification {
  node: { kind: string; actors: { handle: string }[] };
}
const notificationQuery = 'subscription { notificationAdded { node { kind actors { handle } } } }';
const subscribeNotifications = (client: Client) => new Subscription<LiveNotification>(client, notificationQuery, 'notificationAdded');

/** The first handles `prefix0`, `prefix1`, … whose notifications group `index` of two serves. */
function handlesOf(index: number, prefix: string, count: number): string[] {
  const groups = new LiveGroup(0, 2);
  const found: string[] = [];
  for (let i = 0; found.length < count; i++) if (groups.groupOf(`${prefix}${i}`) === index) found.push(`${prefix}${i}`);
  return found;
}

describe('two instance groups splitting the live events', () => {
  // `a` is group 0 of two, `b` group 1, on one database.
  let a: TestApp;
  let b: TestApp;
  const tokens: Record<string, string> = {};
  const clients: Client[] = [];
  const heard = new Map<TestApp, ChangeEvent[]>();
  const [ann, cal] = handlesOf(0, 'ann', 2) as [string, string];
  const [ben, dee] = handlesOf(1, 'ben', 2) as [string, string];
  const patience = 20_000;

  beforeAll(async () => {
    a = await startTestApp({ LIVE_GROUPS: '2', LIVE_GROUP: '0' });
    b = await startTestApp({ MONGODB_URI: a.mongodbUri, LIVE_GROUPS: '2', LIVE_GROUP: '1' });
    for (const app of [a, b]) {
      const events: ChangeEvent[] = [];
      heard.set(app, events);
      app.services.changes.listen((event) => events.push(event));
    }
    for (const handle of [ann, cal, ben, dee]) tokens[handle] = await a.signUp(handle);
  });
  afterAll(async () => {
    await Promise.all(clients.map((client) => client.dispose()));
    await b?.stop();
    await a?.stop();
  });

  const connect = (app: TestApp, handle: string) => {
    const client = liveClient(app, tokens[handle]!);
    clients.push(client);
    return client;
  };

  it("serves a person's live notifications from their group, and names that group to a subscription sent elsewhere", async () => {
    const misdirected = subscribeNotifications(connect(a, ben));
    await misdirected.ended;
    expect(misdirected.errors).toMatchObject([{ message: expect.stringContaining('group 1'), extensions: { code: 'MISDIRECTED', liveGroup: 1 } }]);

    const annOnA = subscribeNotifications(connect(a, ann));
    const benOnB = subscribeNotifications(connect(b, ben));
    await eventually(() => a.services.live.subscriptionCounts().notifications === 1 && b.services.live.subscriptionCounts().notifications === 1, 'subscriptions are open');
    // Each follow goes through the other group's instance: only the stream carries the notification over.
    await follow(a, tokens[ann]!, ben);
    await follow(b, tokens[ben]!, ann);
    expect((await benOnB.waitFor(1, patience)).map(({ node }) => `${node.kind} ${node.actors[0]!.handle}`)).toEqual([`FOLLOW ${ann}`]);
    expect((await annOnA.waitFor(1, patience)).map(({ node }) => `${node.kind} ${node.actors[0]!.handle}`)).toEqual([`FOLLOW ${ben}`]);
  });

  it("reads only its own partitions of the per-person events, and every post on both", async () => {
    const annTimeline = subscribePostAdded(connect(a, ann));
    const calTimeline = subscribePostAdded(connect(b, cal));
    await follow(a, tokens[cal]!, ben);
    await eventually(() => a.services.live.subscriptionCounts().timeline === 1 && b.services.live.subscriptionCounts().timeline === 1, 'subscriptions are open');
    const post = await createPost(b, tokens[ben]!, 'to both groups');
    expect((await annTimeline.waitFor(1, patience)).map((edge) => edge.node.id)).toEqual([post]);
    // cal's subscription is on the instance of the other group: posts are broadcast.
    expect((await calTimeline.waitFor(1, patience)).map((edge) => edge.node.id)).toEqual([post]);

    const recipients = (app: TestApp) =>
      heard.get(app)!.flatMap((event) => (event.kind === 'notificationAdded' ? [event.notification.recipientId] : []));
    await eventually(() => recipients(a).includes(ann) && recipients(b).includes(ben), 'both groups heard their notifications');
    const group0 = new LiveGroup(0, 2);
    expect(recipients(a).every((handle) => group0.holdsPerson(handle))).toBe(true);
    expect(recipients(b).every((handle) => !group0.holdsPerson(handle))).toBe(true);
    // A follow's group is announced by the follow pair's write, which both groups read: each lets
    // pass the groups of the other's partitions (above), and no event document is written for it.
    expect(await a.database.db.collection('live_events').countDocuments({ kind: 'notificationAdded' })).toBe(0);
    // A post is its own announcement (its insert into content), read by both groups: no event document of its own.
    expect(await a.database.db.collection('live_events').countDocuments({ kind: 'postAdded' })).toBe(0);
    for (const app of [a, b]) expect(heard.get(app)!.some((event) => event.kind === 'postAdded' && event.post.id.toHexString() === internalHex(post))).toBe(true);
  });

  it('shows counts and viewer states that changed through the other group', async () => {
    const post = await createPost(b, tokens[ben]!, 'count me');
    const read = async (app: TestApp, handle: string) =>
      (await app.gql('query($id: ID!) { post(id: $id) { likeCount viewerHasLiked } }', { id: post }, tokens[handle])).data.post;
    // ann's instance holds the post's counts once a page shows them.
    expect(await read(a, ann)).toEqual({ likeCount: 0, viewerHasLiked: false });
    // dee's like is announced to dee's group only.
    await like(b, tokens[dee]!, post);
    // The like's events ride on its edge's settling write, each under its person's channel: dee's
    // state reaches dee's group only, ben's group notification ben's. No event document is written.
    const heardOf = (app: TestApp) =>
      heard.get(app)!.flatMap((event) =>
        event.kind === 'counted' && event.viewer ? [`counted ${event.viewer.id}`] : event.kind === 'notificationAdded' && event.notification.kind === 'LIKE' ? [`LIKE ${event.notification.recipientId}`] : [],
      );
    await eventually(() => heardOf(b).length === 2, "the like's events reached dee's and ben's group");
    expect(heardOf(b)).toEqual([`LIKE ${ben}`, `counted ${dee}`]);
    expect(heardOf(a)).toEqual([]);
    expect(await a.database.db.collection('live_events').countDocuments({ kind: { $in: ['notificationAdded', 'counted'] } })).toBe(0);
    const deadline = Date.now() + patience;
    while ((await read(a, ann)).likeCount !== 1 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await read(a, ann)).toEqual({ likeCount: 1, viewerHasLiked: false });
    // dee reading through the other group's instance sees their own state at once, both ways.
    expect((await read(a, dee)).viewerHasLiked).toBe(true);
    await unlike(b, tokens[dee]!, post);
    expect((await read(a, dee)).viewerHasLiked).toBe(false);
    await eventually(() => heardOf(b).length === 3, "the unlike reached dee's group");
    // One write carries events of both groups: each takes its own.
    await like(b, tokens[ann]!, post);
    await eventually(() => heardOf(a).length === 1 && heardOf(b).length === 4, "ann's like reached both groups");
    expect(heardOf(a)).toEqual([`counted ${ann}`]);
    expect(heardOf(b)).toEqual([`LIKE ${ben}`, `counted ${dee}`, `counted ${dee}`, `LIKE ${ben}`]);
  });
});
