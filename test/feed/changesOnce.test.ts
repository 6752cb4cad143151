import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChangeEvent } from '../../src/changes/events.js';
import { feedStrategies } from '../../src/config.js';
import { LiveClients, subscribePostRemoved, subscriptionsOpen } from '../live/liveClient.js';
import { heardEverything } from '../support/announcements.js';
import { startTestApp, type GraphQLResponse, type TestApp } from '../support/testApp.js';
import { internalHex } from '../support/ids.js';

const racers = 10;

/**
 * Racing requests for the same change: the answers and the announced events follow what each
 * request itself changed. A delete is answered true once and NOT_FOUND for the others, as a later
 * delete would be, and removed once for subscribers; a follow or unfollow asked for many times at
 * once is announced once; a like's answer shows the like, whatever the unlike racing it did.
 */
describe.each(feedStrategies)('racing requests for one change: FEED_STRATEGY=%s', (strategy) => {
  let app: TestApp;
  const tokens: Record<string, string> = {};
  const live = new LiveClients(() => app, tokens);
  const events: ChangeEvent[] = [];
  let stopListening: () => void;

  const gql = (handle: string, query: string) => app.gql(query, {}, tokens[handle]);
  const together = (handle: string, queries: string[]) => Promise.all(queries.map((query) => gql(handle, query)));
  const codes = (answers: GraphQLResponse[]) => answers.map((answer) => answer.errors?.[0]?.extensions?.code ?? null);

  beforeAll(async () => {
    app = await startTestApp({ FEED_STRATEGY: strategy });
    for (const handle of ['author', 'reader', 'fan']) tokens[handle] = await app.signUp(handle);
    await gql('reader', 'mutation { follow(handle: "author") { handle } }');
    stopListening = app.services.changes.listen((event) => events.push(event));
  });
  afterAll(async () => {
    stopListening?.();
    await live.disposeAll();
    await app?.stop();
  });

  it('answers true to one of ten racing deletes of a post, NOT_FOUND to the others, and removes it once', async () => {
    const removals = subscribePostRemoved(live.connect('reader'));
    await subscriptionsOpen(app, 1);
    const { id } = (await gql('author', 'mutation { createPost(text: "deleted ten times at once") { id } }')).data.createPost;
    await app.settled();

    const answers = await together('author', Array.from({ length: racers }, () => `mutation { deletePost(id: "${id}") }`));
    expect(answers.filter((answer) => answer.data?.deletePost === true)).toHaveLength(1);
    expect(codes(answers).filter((code) => code === 'NOT_FOUND')).toHaveLength(racers - 1);
    await heardEverything(app); // every announcement of the race has come back through the change stream
    expect(events.filter((event) => event.kind === 'postRemoved' && event.postId.toHexString() === internalHex(id))).toHaveLength(1);
    await removals.waitFor(1);
    await app.settled();
    // A later removal, delivered in order after any second removal of the first post: once it is
    // here, everything sent before it is too.
    const marker = (await gql('author', 'mutation { createPost(text: "removed after the race") { id } }')).data.createPost.id;
    await gql('author', `mutation { deletePost(id: "${marker}") }`);
    await removals.waitFor(2);
    expect(removals.results).toEqual([id, marker]);
    removals.stop();
  });

  it('announces one follow and one unfollow however many of each race', async () => {
    const announced = (kind: string) => events.filter((event) => event.kind === kind && 'followerId' in event && event.followerId === 'fan').length;
    const follows = await together('fan', Array.from({ length: racers }, () => 'mutation { follow(handle: "author") { viewerIsFollowing } }'));
    expect(codes(follows)).toEqual(Array(racers).fill(null));
    await heardEverything(app);
    expect(announced('followed')).toBe(1);
    const unfollows = await together('fan', Array.from({ length: racers }, () => 'mutation { unfollow(handle: "author") { viewerIsFollowing } }'));
    expect(codes(unfollows)).toEqual(Array(racers).fill(null));
    await heardEverything(app);
    expect(announced('unfollowed')).toBe(1);
  });

  it('answers each of racing likes and unlikes with what that request did', async () => {
    const { id } = (await gql('author', 'mutation { createPost(text: "liked and unliked at once") { id } }')).data.createPost;
    const queries = Array.from({ length: racers }, (_, i) =>
      i % 2 ? `mutation { unlikePost(id: "${id}") { viewerHasLiked } }` : `mutation { likePost(id: "${id}") { viewerHasLiked } }`,
    );
    const answers = await together('fan', queries);
    expect(answers.map((answer) => answer.data?.likePost?.viewerHasLiked ?? answer.data?.unlikePost?.viewerHasLiked)).toEqual(
      Array.from({ length: racers }, (_, i) => i % 2 === 0),
    );
    const reposts = await together('fan', [`mutation { repost(id: "${id}") { viewerHasReposted } }`, `mutation { undoRepost(id: "${id}") { viewerHasReposted } }`]);
    expect(reposts.map((answer) => answer.data?.repost?.viewerHasReposted ?? answer.data?.undoRepost?.viewerHasReposted)).toEqual([true, false]);
  });
});
