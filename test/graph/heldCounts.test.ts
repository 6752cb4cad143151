import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { heardEverything } from '../support/announcements.js';
import { requestCommandNames, startTestApp, type TestApp } from '../support/testApp.js';

/**
 * A follow changes two users' counts and nothing else about them: every instance that holds either
 * user takes the new counts from the follow's announcement, in place, instead of reading the users
 * again, and an announcement that arrives late never takes a count back.
 */
describe('counts held in every instance', () => {
  let first: TestApp;
  let second: TestApp;
  const tokens: Record<string, string> = {};
  const profile = '{ user(handle: "hc_bob") { followerCount } viewer { followingCount } }';

  beforeAll(async () => {
    first = await startTestApp();
    second = await startTestApp({ MONGODB_URI: first.mongodbUri });
    for (const handle of ['hc_ann', 'hc_bob']) tokens[handle] = await first.signUp(handle);
  });
  afterAll(async () => {
    await second?.stop();
    await first?.stop();
  });

  /** The counts `app` shows ann, and the users queries it sent to show them. */
  const seenBy = async (app: TestApp) => {
    let answer: any;
    const commands = await app.commandsDuring(async () => {
      answer = await app.gql(profile, {}, tokens.hc_ann);
    });
    return { counts: [answer.data.user.followerCount, answer.data.viewer.followingCount], reads: requestCommandNames(commands).filter((name) => name === 'find users').length };
  };


  it('shows a follow’s counts on both instances without reading either user again', async () => {
    for (const app of [first, second]) {
      await seenBy(app);
      expect(await seenBy(app)).toEqual({ counts: [0, 0], reads: 0 });
    }
    const followed = await first.gql('mutation { follow(handle: "hc_bob") { followerCount } }', {}, tokens.hc_ann);
    expect(followed.data.follow.followerCount).toBe(1);

    expect(await seenBy(first)).toEqual({ counts: [1, 1], reads: 0 });
    // Once the second instance has heard the follow, its held users carry the new counts.
    await heardEverything(first, second);
    expect(await seenBy(second)).toEqual({ counts: [1, 1], reads: 0 });

    await second.gql('mutation { unfollow(handle: "hc_bob") { followerCount } }', {}, tokens.hc_ann);
    await heardEverything(second, first);
    expect(await seenBy(first)).toEqual({ counts: [0, 0], reads: 0 });
  });

  it('keeps the newer counts when an older announcement arrives after them', async () => {
    await first.gql('mutation { follow(handle: "hc_bob") { followerCount } }', {}, tokens.hc_ann);
    await heardEverything(first, second);
    expect((await seenBy(second)).counts[0]).toBe(1);
    const version = (await second.database.db.collection<{ _id: string; countVersion?: number }>('users').findOne({ _id: 'hc_bob' }))!.countVersion!;

    second.services.graph.applyCounts([{ handle: 'hc_bob', followerCount: 7, followingCount: 0, version: version - 1, followingVersion: 0 }]);
    expect(await seenBy(second)).toEqual({ counts: [1, 1], reads: 0 });
    second.services.graph.applyCounts([{ handle: 'hc_bob', followerCount: 7, followingCount: 0, version: version + 1, followingVersion: 0 }]);
    expect(await seenBy(second)).toEqual({ counts: [7, 1], reads: 0 });
  });
});
