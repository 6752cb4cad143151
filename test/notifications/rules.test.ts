import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/testApp.js';
import { act, createPost, follow, like, listed, notificationsOf, repost, undoRepost, unfollow, unlike } from './support.js';

describe('who is told what', () => {
  let app: TestApp;
  const tokens: Record<string, string> = {};

  beforeAll(async () => {
    app = await startTestApp();
    for (const handle of ['ann', 'bob', 'cat', 'dan', 'eve', 'fay']) tokens[handle] = await app.signUp(handle);
  });
  afterAll(() => app?.stop());

  it('tells the followed, the liked and reposted author, the replied-to author and each mentioned user', async () => {
    const post = await createPost(app, tokens.ann!, 'hello world');
    await follow(app, tokens.bob!, 'ann');
    await like(app, tokens.bob!, post);
    await repost(app, tokens.cat!, post);
    const reply = await createPost(app, tokens.dan!, 'nice one @ann, says @eve and @nobody_here', post);

    expect(await listed(app, tokens.ann!)).toEqual(['REPLY 1 [dan]', 'REPOST 1 [cat]', 'LIKE 1 [bob]', 'FOLLOW 1 [bob]']);
    // The parent's author is told of the reply once, not also of the mention; an unknown handle tells no one.
    expect(await listed(app, tokens.eve!)).toEqual(['MENTION 1 [dan]']);
    const { items } = await notificationsOf(app, tokens.ann!);
    expect(items.map((item) => item.post)).toEqual([reply, post, post, null]);
    expect(await listed(app, tokens.bob!)).toEqual([]);
    expect(await listed(app, tokens.dan!)).toEqual([]);
  });

  it('never tells of one’s own action', async () => {
    const post = await createPost(app, tokens.fay!, 'talking to @fay myself');
    await like(app, tokens.fay!, post);
    await createPost(app, tokens.fay!, 'and replying to me', post);
    expect(await listed(app, tokens.fay!)).toEqual([]);
  });
});
