import type { Client } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answersAs, startTestApp, type TestApp } from '../support/testApp.js';
import { createPost, eventually, follow, liveClient, subscribePostAdded, subscribePostRemoved, subscriptionsOpen } from './liveClient.js';

const addedWithRepost = `subscription { timelinePostAdded { cursor repostedBy { handle } node { id text author { handle } } } }`;

/**
 * Live events obey the same rules as the timeline query: mutes, blocks, keyword filters, and one
 * occurrence per reposted post. Events arrive in order, so an unfiltered marker posted after a
 * filtered event proves the filtered one was not sent.
 */
describe('live events under mutes, blocks, keyword filters and reposts', () => {
  let app: TestApp;
  let client: Client;
  const tokens: Record<string, string> = {};
  const ok = answersAs(() => app, tokens);

  beforeAll(async () => {
    app = await startTestApp();
    for (const handle of ['vic', 'wes', 'xan', 'zed']) tokens[handle] = await app.signUp(handle);
    await follow(app, tokens.vic!, 'wes');
    await follow(app, tokens.vic!, 'xan');
    client = liveClient(app, tokens.vic!);
  });
  afterAll(async () => {
    await client?.dispose();
    await app?.stop();
  });

  it('sends what the timeline shows and nothing it hides', async () => {
    const added = subscribePostAdded(client, addedWithRepost);
    const removed = subscribePostRemoved(client);
    await subscriptionsOpen(app, 2);
    const texts = () => added.results.map((edge) => `${edge.node.text}${edge.repostedBy ? ` via ${edge.repostedBy.handle}` : ''}`);

    await ok('vic', 'mutation { mute(handle: "wes") { handle } }');
    await createPost(app, tokens.wes!, 'muted words');
    await createPost(app, tokens.xan!, 'marker 1');
    await added.waitFor(1);
    await ok('vic', 'mutation { unmute(handle: "wes") { handle } }');
    const wesPost = await createPost(app, tokens.wes!, 'wes is back');
    await added.waitFor(2);

    await ok('vic', 'mutation { addKeywordFilter(phrase: "secret") { id } }');
    await createPost(app, tokens.xan!, 'a SECRET thing');
    await createPost(app, tokens.xan!, 'secretive is another word');
    await added.waitFor(3);

    const stranger = await createPost(app, tokens.zed!, 'from zed');
    await ok('xan', `mutation { repost(id: "${stranger.id}") { id } }`); // brought in by xan
    await ok('wes', `mutation { repost(id: "${stranger.id}") { id } }`); // already there
    await ok('xan', `mutation { repost(id: "${wesPost.id}") { id } }`); // vic follows wes: already there
    await createPost(app, tokens.wes!, 'marker 2');
    await added.waitFor(5);
    expect(texts()).toEqual(['marker 1', 'wes is back', 'secretive is another word', 'from zed via xan', 'marker 2']);
    expect(added.results[3]!.node.id).toBe(stranger.id);

    // Undoing the repost that showed the post removes it; undoing one that never showed does not.
    await ok('wes', `mutation { undoRepost(id: "${stranger.id}") { id } }`);
    await ok('xan', `mutation { undoRepost(id: "${wesPost.id}") { id } }`);
    await ok('xan', `mutation { undoRepost(id: "${stranger.id}") { id } }`);
    await removed.waitFor(1);

    // Blocks hide both ways: nothing from or about a user who blocked the viewer.
    const zedAgain = await createPost(app, tokens.zed!, 'zed again');
    await ok('zed', 'mutation { block(handle: "vic") { handle } }');
    await ok('xan', `mutation { repost(id: "${zedAgain.id}") { id } }`);
    await ok('vic', 'mutation { mute(handle: "xan") { handle } }');
    const hidden = await createPost(app, tokens.xan!, 'xan while muted');
    await ok('xan', `mutation { deletePost(id: "${hidden.id}") }`);
    const last = await createPost(app, tokens.wes!, 'marker 3');
    await ok('wes', `mutation { deletePost(id: "${last.id}") }`);
    await added.waitFor(6);
    await eventually(() => removed.results.includes(last.id), 'the marker removal arrived');
    expect(texts().at(-1)).toBe('marker 3');
    // Each removal is checked against the state when it is sent; a check that runs late may pass a
    // second removal of the same post (harmless: it is gone), never a removal of one still shown.
    expect([...new Set(removed.results)]).toEqual([stranger.id, last.id]);
    added.stop();
    removed.stop();
  });
});
