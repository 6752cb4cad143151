import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/testApp.js';
import { createPost, expectGroupsExact, follow, like, listed, notificationsQuery, unfollow, unlike } from './support.js';

describe('notifications under concurrency (two instances)', () => {
  let app: TestApp;
  let other: TestApp;
  const tokens: Record<string, string> = {};
  const crowd = Array.from({ length: 40 }, (_, i) => `crowd_${i}`);

  beforeAll(async () => {
    app = await startTestApp();
    other = await startTestApp({ MONGODB_URI: app.mongodbUri });
    for (const handle of ['star', 'flip', 'watched', ...crowd]) tokens[handle] = await app.signUp(handle);
  }, 60_000);
  afterAll(async () => {
    await other?.stop();
    await app?.stop();
  });

  it('counts racing joins and leaves of one group exactly', async () => {
    const post = await createPost(app, tokens.star!, 'popular');
    const instance = (i: number) => (i % 2 === 0 ? app : other);
    await Promise.all(crowd.map((handle, i) => like(instance(i), tokens[handle]!, post)));
    await Promise.all(crowd.map((handle, i) => follow(instance(i), tokens[handle]!, 'star')));
    // Half leave while the others join again (nothing changes for them).
    await Promise.all(
      crowd.map((handle, i) =>
        i % 2 === 0 ? Promise.all([unlike(instance(i), tokens[handle]!, post), unfollow(instance(i + 1), tokens[handle]!, 'star')]) : like(instance(i), tokens[handle]!, post),
      ),
    );
    const shown = await listed(app, tokens.star!);
    expect(shown.map((line) => line.split(' [')[0])).toEqual(['FOLLOW 20', 'LIKE 20']);
    const stayed = crowd.filter((_, i) => i % 2 === 1);
    for (const line of shown) {
      const actors = line.slice(line.indexOf('[') + 1, -1).split(',');
      expect(actors.every((actor) => stayed.includes(actor))).toBe(true);
      expect(actors).toHaveLength(20);
    }
    await expectGroupsExact(app);
  });

  it('ends a person’s 1,000 racing likes and unlikes in the state of the last answer, with nothing left behind', async () => {
    const post = await createPost(app, tokens.star!, 'flip me');
    const answers = await Promise.all(
      Array.from({ length: 1000 }, (_, i) => {
        const on = i % 2 === 0;
        const instance = i % 4 < 2 ? app : other;
        return (on ? like : unlike)(instance, tokens.flip!, post).then(() => on);
      }),
    );
    expect(answers).toHaveLength(1000);
    const liked = (await app.gql('query($id: ID!) { post(id: $id) { likeCount viewerHasLiked } }', { id: post }, tokens.flip)).data.post;
    const likes = await listed(app, tokens.star!, { kinds: ['LIKE'] });
    const ofThisPost = likes.filter((line) => line.endsWith('[flip]'));
    expect(ofThisPost).toEqual(liked.viewerHasLiked ? ['LIKE 1 [flip]'] : []);
    expect(liked.likeCount).toBe(liked.viewerHasLiked ? 1 : 0);

    // One more answer each way, one after the other: the notification follows each.
    await like(other, tokens.flip!, post);
    expect((await listed(app, tokens.star!, { kinds: ['LIKE'] })).filter((line) => line.endsWith('[flip]'))).toEqual(['LIKE 1 [flip]']);
    await unlike(app, tokens.flip!, post);
    expect((await listed(app, tokens.star!, { kinds: ['LIKE'] })).filter((line) => line.endsWith('[flip]'))).toEqual([]);
    await expectGroupsExact(app);
  }, 120_000);

  it('shows groups whose count and actors agree at every read while 30 accounts like, unlike, follow and unfollow', async () => {
    const actors = crowd.slice(0, 30);
    const post = await createPost(app, tokens.watched!, 'watch me');
    let acting = true;
    let reads = 0;
    const disagreements: string[] = [];
    // Both instances read the groups as fast as they can, as a client polling its notifications would.
    const readers = [app, other].map(async (instance) => {
      while (acting) {
        const result = await instance.gql(notificationsQuery, { first: 20 }, tokens.watched);
        for (const { node } of result.data.notifications.edges) {
          const shown = node.actors.map((actor: { handle: string }) => actor.handle);
          const agrees = shown.length === Math.min(node.actorCount, 20) && new Set(shown).size === shown.length && shown.every((handle: string) => actors.includes(handle));
          if (!agrees) disagreements.push(`${node.kind} ${node.actorCount} [${shown.join(',')}]`);
        }
        reads++;
      }
    });
    // Each account flips its like and its follow ten times, on either instance.
    await Promise.all(
      actors.map(async (handle, i) => {
        for (let round = 0; round < 10; round++) {
          const instance = (i + round) % 2 === 0 ? app : other;
          await (round % 2 === 0 ? like : unlike)(instance, tokens[handle]!, post);
          await (round % 3 === 2 ? unfollow : follow)(instance, tokens[handle]!, 'watched');
        }
      }),
    );
    acting = false;
    await Promise.all(readers);
    expect(reads).toBeGreaterThan(10);
    expect(disagreements).toEqual([]);
    await expectGroupsExact(app);
  }, 120_000);
});

describe('a leave that must show the next member in line, raced by joins and leaves', () => {
  let app: TestApp;
  const tokens: Record<string, string> = {};
  const fans = Array.from({ length: 24 }, (_, i) => `fan_${String(i).padStart(2, '0')}`);

  beforeAll(async () => {
    app = await startTestApp();
    for (const handle of ['idol', 'late_one', ...fans]) tokens[handle] = await app.signUp(handle);
  }, 60_000);
  afterAll(() => app?.stop());

  it('ends with the newest members shown when another change lands between its read and its write', async () => {
    const post = await createPost(app, tokens.idol!, 'many likes');
    for (const fan of fans) await like(app, tokens[fan]!, post);
    // The newest fan leaving makes the group read the next member in line; right then, another
    // fan leaves and a new one joins, so the group it read is no longer the group it would write.
    const { likes } = app.services.interactions;
    const membersAfter = likes.membersAfter.bind(likes);
    let interfered = false;
    likes.membersAfter = (group, below) => {
      if (!interfered) {
        interfered = true;
        return (async function* () {
          await unlike(app, tokens.fan_05!, post);
          await like(app, tokens.late_one!, post);
          yield* membersAfter(group, below);
        })();
      }
      return membersAfter(group, below);
    };
    try {
      await unlike(app, tokens.fan_23!, post);
    } finally {
      likes.membersAfter = membersAfter;
    }
    expect(interfered).toBe(true);
    const [group] = await listed(app, tokens.idol!);
    expect(group).toMatch(/^LIKE 23 \[late_one,fan_22,fan_21,/);
    await expectGroupsExact(app);
  });
});
