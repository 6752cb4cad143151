import { ObjectId } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runQueued } from '../support/queuedTasks.js';
import { startTestApp, type TestApp } from '../support/testApp.js';
import { internalId } from '../support/ids.js';

const day = 24 * 3600;

/** The expiry of each collection's TTL index, by the field it watches. */
async function expiries(app: TestApp, collection: string): Promise<Record<string, number>> {
  const indexes = await app.database.db.collection(collection).indexes();
  return Object.fromEntries(indexes.filter((index) => index.expireAfterSeconds !== undefined).map((index) => [Object.keys(index.key)[0]!, index.expireAfterSeconds!]));
}

/**
 * Notifications and time buckets are kept for a configured period, and deleted posts' records for
 * a day. The embedded stand-in never runs a TTL pass, so expiry is played by deleting what
 * MongoDB's would: what a reader sees past retention is the end of the list, never an error.
 */
describe('retention', () => {
  let app: TestApp;
  const tokens: Record<string, string> = {};
  const as = (handle: string, query: string) => app.gql(query, {}, tokens[handle]);
  const post = async (handle: string, text: string) => (await as(handle, `mutation { createPost(text: "${text}") { id } }`)).data.createPost.id as string;

  beforeAll(async () => {
    app = await startTestApp({
      FEED_STRATEGY: 'time-buckets',
      TIMELINE_BUCKET_SPAN: '0.05',
      TIMELINE_RETENTION_DAYS: '30',
      NOTIFICATION_RETENTION_DAYS: '60',
      FANOUT_WORKERS: '0',
    });
    for (const handle of ['reader', 'author', 'fan', 'late']) tokens[handle] = await app.signUp(handle);
    await as('reader', 'mutation { follow(handle: "author") { handle } }');
    await as('reader', '{ timeline { edges { cursor } } }');
  });
  afterAll(() => app?.stop());

  it('keeps each kept collection by its own configured period', async () => {
    expect(await expiries(app, 'notifications')).toEqual({ at: 60 * day });
    expect(await expiries(app, 'timed_buckets')).toEqual({ e: 30 * day });
    expect(await expiries(app, 'deleted_posts')).toEqual({ at: day });
    // A new period at the next start is applied to the index there is.
    const again = await startTestApp({ MONGODB_URI: app.mongodbUri, FEED_STRATEGY: 'time-buckets', NOTIFICATION_RETENTION_DAYS: '7', TIMELINE_RETENTION_DAYS: '14', FANOUT_WORKERS: '0' });
    try {
      expect(await expiries(again, 'notifications')).toEqual({ at: 7 * day });
      expect(await expiries(again, 'timed_buckets')).toEqual({ e: 14 * day });
    } finally {
      await again.stop();
    }
  });

  it('ends a timeline where its expired buckets were, for a page and for a cursor into them', async () => {
    const texts = ['old', 'middle', 'new'];
    for (const text of texts) {
      await post('author', text);
      await new Promise((resolve) => setTimeout(resolve, 60));
    }
    await runQueued(app);
    const page = async (after?: string) =>
      (await as('reader', `{ timeline(first: 10${after ? `, after: "${after}"` : ''}) { edges { cursor node { text } } pageInfo { hasNextPage } } }`)).data.timeline;
    const before = await page();
    expect(before.edges.map((edge: { node: { text: string } }) => edge.node.text)).toEqual(['new', 'middle', 'old']);
    const buckets = app.database.db.collection<{ _id: { _t: number; _u: string }; e: Date }>('timed_buckets');
    const oldest = await buckets.find({ '_id._u': 'reader' }).sort({ '_id._t': 1 }).limit(1).next();
    expect(oldest!.e.getTime()).toBe((oldest!._id._t + 1) * 50);
    await buckets.deleteOne({ _id: oldest!._id });

    const after = await page();
    expect(after.edges.map((edge: { node: { text: string } }) => edge.node.text)).toEqual(['new', 'middle']);
    expect(after.pageInfo.hasNextPage).toBe(false);
    const past = await app.gql(`{ timeline(first: 10, after: "${before.edges[2].cursor}") { edges { cursor } pageInfo { hasNextPage } } }`, {}, tokens.reader);
    expect(past.errors).toBeUndefined();
    expect(past.data.timeline).toEqual({ edges: [], pageInfo: { hasNextPage: false } });
  });

  it('ends the notifications where expired ones were, and a like after its group expired starts a new group without touching others', async () => {
    const liked = await post('author', 'liked over two periods');
    await as('fan', `mutation { likePost(id: "${liked}") { likeCount } }`);
    const list = async (after?: string) =>
      (await as('author', `{ notifications(first: 10${after ? `, after: "${after}"` : ''}) { edges { cursor node { kind actorCount actors { handle } } } pageInfo { hasNextPage } } }`)).data
        .notifications;
    const first = await list();
    expect(first.edges.map((edge: any) => `${edge.node.kind} ${edge.node.actorCount} ${edge.node.actors.map((actor: any) => actor.handle)}`)).toEqual(['LIKE 1 fan', 'FOLLOW 1 reader']);

    // The like's group ages out of retention: MongoDB's TTL pass removes it.
    const groups = app.database.db.collection('notifications');
    await groups.deleteOne({ _id: app.services.memberships.postGroup('LIKE', internalId(liked)) as never });
    const { memberships } = app.services;
    const realNow = memberships.now;
    memberships.now = () => new Date(realNow().getTime() + 60 * day * 1000);
    try {
      await as('late', `mutation { likePost(id: "${liked}") { likeCount } }`);
      // The earlier liker leaves a group that is gone: nothing else changes.
      const unliked = await as('fan', `mutation { unlikePost(id: "${liked}") { likeCount viewerHasLiked } }`);
      expect(unliked.data.unlikePost).toEqual({ likeCount: 1, viewerHasLiked: false });
    } finally {
      memberships.now = realNow;
    }
    const now = await list();
    expect(now.edges.map((edge: any) => `${edge.node.kind} ${edge.node.actorCount} ${edge.node.actors.map((actor: any) => actor.handle)}`)).toEqual(['LIKE 1 late', 'FOLLOW 1 reader']);
    // A cursor at a notification retention removed pages on from where it stood.
    await groups.deleteOne({ k: 'FOLLOW' });
    const past = await list(now.edges[1].cursor);
    expect(past).toEqual({ edges: [], pageInfo: { hasNextPage: false } });
  });
});
