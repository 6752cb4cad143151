import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runQueuedAsWorker } from '../../support/queuedTasks.js';
import { startTestApp, type TestApp } from '../../support/testApp.js';

const bucketStrategies = [
  { strategy: 'time-buckets', collection: 'timed_buckets', owner: '_id._u' },
  { strategy: 'sized-buckets', collection: 'sized_buckets', owner: '_u' },
] as const;

/**
 * Where an unfollowed author's entries go under the strategies that keep them in buckets: the
 * unfollow's request leaves them (pages leave them out), the follow pairs' sweep takes a second's
 * unfollows out in one pass, and a follow back that comes first takes them out itself.
 */
describe.each(bucketStrategies)('unfollowed entries: $strategy', ({ strategy, collection, owner }) => {
  let app: TestApp;
  const tokens: Record<string, string> = {};
  const as = (handle: string, query: string) => app.gql(query, {}, tokens[handle]);
  const timeline = async (reader: string) =>
    (await as(reader, '{ timeline { edges { node { text author { handle } } } } }')).data.timeline.edges.map((edge: any) => `${edge.node.author.handle}: ${edge.node.text}`);
  const follow = (reader: string, handle: string) => as(reader, `mutation { follow(handle: "${handle}") { followerCount } }`);
  const unfollow = (reader: string, handle: string) => as(reader, `mutation { unfollow(handle: "${handle}") { followerCount } }`);
  const post = async (author: string, text: string) => (await as(author, `mutation { createPost(text: "${text}") { id } }`)).data.createPost.id as string;
  /** The texts of `author`'s entries stored in `reader`'s buckets, whatever pages show. */
  const stored = async (reader: string, author: string) => {
    const buckets = await app.database.db.collection<any>(collection).find({ [owner]: reader }).toArray();
    return buckets.flatMap((bucket) => bucket._c.filter((entry: any) => entry._a === author).map((entry: any) => String(entry._id)));
  };
  const sweep = (effects = app.services.relations.followEffects) => app.services.graph.pairs.pruneSettled(effects);
  const pairOf = (follower: string, followee: string) => app.database.db.collection<any>('follow_pairs').findOne({ _id: `${follower} ${followee}` });

  beforeAll(async () => {
    app = await startTestApp({ FEED_STRATEGY: strategy, FANOUT_WORKERS: '0' });
    for (const handle of ['ue_reader', 'ue_other', 'ue_quiet', 'ue_loud']) tokens[handle] = await app.signUp(handle);
    for (const reader of ['ue_reader', 'ue_other']) {
      for (const followee of ['ue_quiet', 'ue_loud']) expect((await follow(reader, followee)).errors).toBeUndefined();
    }
    await post('ue_loud', 'loud one');
    await post('ue_loud', 'loud two');
    await runQueuedAsWorker(app);
    await sweep();
  }, 60_000);
  afterAll(() => app?.stop());

  it('leaves the entries to the sweep, whose one pass takes them out of every follower; pages never show them meanwhile', async () => {
    expect(await stored('ue_reader', 'ue_loud')).toHaveLength(2);
    const commands = await app.commandsDuring(async () => {
      expect((await unfollow('ue_reader', 'ue_loud')).errors).toBeUndefined();
      // Asked twice (a second click): the second changes nothing, and leaves the removal owed.
      expect((await unfollow('ue_reader', 'ue_loud')).errors).toBeUndefined();
      expect((await unfollow('ue_other', 'ue_loud')).errors).toBeUndefined();
    });
    expect(commands.filter((command) => command.command[command.commandName] === collection)).toEqual([]);
    expect(await stored('ue_reader', 'ue_loud')).toHaveLength(2);
    expect(await timeline('ue_reader')).toEqual([]);

    const passCommands = await app.commandsDuring(() => sweep());
    // Both unfollows in one write (time buckets then delete the buckets left empty, in one more).
    expect(passCommands.filter((command) => command.command[command.commandName] === collection).map((command) => command.commandName)).toEqual(
      strategy === 'time-buckets' ? ['update', 'delete'] : ['update'],
    );
    expect(await stored('ue_reader', 'ue_loud')).toEqual([]);
    expect(await stored('ue_other', 'ue_loud')).toEqual([]);
    if (strategy === 'time-buckets') expect(await app.database.db.collection(collection).countDocuments({ [owner]: 'ue_reader', _c: { $size: 0 } })).toBe(0);
    const pair = await pairOf('ue_reader', 'ue_loud');
    expect([pair.ro, pair.lease, pair.tp]).toEqual([undefined, null, undefined]);
  });

  it('has a follow back that comes before the sweep take the old entries out first: a post deleted meanwhile does not come back', async () => {
    await follow('ue_reader', 'ue_loud');
    const kept = await post('ue_loud', 'loud kept');
    const deleted = await post('ue_loud', 'loud deleted');
    await runQueuedAsWorker(app);
    await sweep();
    expect(await timeline('ue_reader')).toEqual(['ue_loud: loud deleted', 'ue_loud: loud kept', 'ue_loud: loud two', 'ue_loud: loud one']);

    await unfollow('ue_reader', 'ue_loud');
    // The reader no longer follows: the deletion's retraction does not reach their buckets.
    expect((await as('ue_loud', `mutation { deletePost(id: "${deleted}") }`)).errors).toBeUndefined();
    await runQueuedAsWorker(app);
    expect(await stored('ue_reader', 'ue_loud')).toHaveLength(4);

    expect((await follow('ue_reader', 'ue_loud')).errors).toBeUndefined();
    expect(await timeline('ue_reader')).toEqual(['ue_loud: loud kept', 'ue_loud: loud two', 'ue_loud: loud one']);
    expect(await stored('ue_reader', 'ue_loud')).toHaveLength(3);
    expect((await pairOf('ue_reader', 'ue_loud')).ro).toBeUndefined();
    // The sweep leaves a followed account's entries where they are.
    await sweep();
    expect(await timeline('ue_reader')).toEqual(['ue_loud: loud kept', 'ue_loud: loud two', 'ue_loud: loud one']);
    expect(kept).toBeTruthy();
  });

  it('survives a sweep that dies holding the leases: a follow back waits for them, a later pass takes the rest out', async () => {
    await follow('ue_other', 'ue_loud');
    await runQueuedAsWorker(app);
    await sweep();
    await unfollow('ue_reader', 'ue_loud');
    await unfollow('ue_other', 'ue_loud');
    // A pass that leases both pairs and never finishes: as a worker killed after taking the leases.
    void sweep({ ...app.services.relations.followEffects, removeUnfollowed: () => new Promise<void>(() => {}) });
    while ((await pairOf('ue_other', 'ue_loud')).lease === null) await new Promise((resolve) => setTimeout(resolve, 5));
    // Another pass meanwhile takes no lease someone holds: it leaves the pairs marked for a later one.
    await sweep();
    expect(await stored('ue_other', 'ue_loud')).toHaveLength(3);
    expect((await pairOf('ue_other', 'ue_loud')).ro).toBe(true);

    const { lease } = await pairOf('ue_reader', 'ue_loud');
    expect(lease).not.toBeNull();
    const back = await follow('ue_reader', 'ue_loud');
    expect(back.errors).toBeUndefined();
    // It waited for the dead pass's lease to expire.
    expect(Date.now()).toBeGreaterThanOrEqual(lease.until.getTime());
    expect(await timeline('ue_reader')).toEqual(['ue_loud: loud kept', 'ue_loud: loud two', 'ue_loud: loud one']);
    expect(await stored('ue_other', 'ue_loud')).toHaveLength(3);
    await sweep();
    expect(await stored('ue_other', 'ue_loud')).toEqual([]);
    expect(await stored('ue_reader', 'ue_loud')).toHaveLength(3);
    const pairs = await app.database.db.collection<any>('follow_pairs').find({ t: 'ue_loud' }).toArray();
    expect(pairs.map((pair) => [pair._id, pair.counted, pair.lease, pair.ro ?? null]).sort()).toEqual([
      ['ue_other ue_loud', false, null, null],
      ['ue_reader ue_loud', true, null, null],
    ]);
  }, 30_000);
});
