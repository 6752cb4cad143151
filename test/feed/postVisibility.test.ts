import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/testApp.js';

/**
 * The replies listed under a post, read by query with the visibility rule as a filter on
 * `content` (PostVisibility.filterFor). A mentioned-only reply is for its audience alone, however
 * the reader stands with its author: following the author, or being addressed by other posts, lets
 * no one else read it.
 */
describe('the replies a reader is shown under a post', () => {
  let app: TestApp;
  const tokens: Record<string, string> = {};

  const ok = async (handle: string, query: string) => {
    const result = await app.gql(query, {}, tokens[handle]);
    if (result.errors) throw new Error(`${handle}: ${JSON.stringify(result.errors)}`);
    return result.data;
  };
  const create = async (handle: string, text: string, options: { visibility?: string; replyTo?: string } = {}) => {
    const args = [`text: ${JSON.stringify(text)}`, options.visibility ? `visibility: ${options.visibility}` : '', options.replyTo ? `replyTo: "${options.replyTo}"` : ''];
    return (await ok(handle, `mutation { createPost(${args.join(' ')}) { id visibility } }`)).createPost as { id: string; visibility: string };
  };
  /** The texts of the replies `viewer` is shown under `parent`, oldest first. */
  const replies = async (viewer: string, parent: string): Promise<string[]> =>
    (await ok(viewer, `{ post(id: "${parent}") { replies(first: 20) { edges { node { text } } } } }`)).post.replies.edges.map((edge: any) => edge.node.text);

  beforeAll(async () => {
    app = await startTestApp();
    for (const handle of ['ann', 'bob', 'cat', 'dan', 'reader']) tokens[handle] = await app.signUp(handle);
    await ok('reader', 'mutation { follow(handle: "bob") { handle } }');
  });
  afterAll(() => app?.stop());

  it('never lists a followee’s mentioned-only reply to a reader it does not mention, also once that followee posts for followers', async () => {
    const parent = (await create('ann', 'ann asks in public')).id;
    const forCat = await create('bob', 'bob answers @cat alone', { visibility: 'MENTIONED', replyTo: parent });
    expect(forCat.visibility).toBe('MENTIONED');
    expect(await replies('reader', parent)).toEqual([]);
    expect(await replies('cat', parent)).toEqual(['bob answers @cat alone']);

    // bob now writes for followers too: the reader's filter names bob for followers-only posts,
    // which must not open bob's mentioned-only ones to the reader.
    await create('bob', 'bob to his followers', { visibility: 'FOLLOWERS' });
    await create('bob', 'bob answers ann, for his followers', { visibility: 'FOLLOWERS', replyTo: parent });
    expect(await replies('reader', parent)).toEqual(['bob answers ann, for his followers']);
    expect(await replies('cat', parent)).toEqual(['bob answers @cat alone']);
    expect(await replies('bob', parent)).toEqual(['bob answers @cat alone', 'bob answers ann, for his followers']);
  });

  it('lists to a reader addressed elsewhere only the mentioned-only replies that address them', async () => {
    const parent = (await create('ann', 'ann asks again')).id;
    // The reader has an inbox now: a mentioned-only post of someone else is for them.
    await create('dan', 'dan to @reader, elsewhere', { visibility: 'MENTIONED' });
    await create('bob', 'bob answers @cat, again', { visibility: 'MENTIONED', replyTo: parent });
    await create('bob', 'bob answers @reader', { visibility: 'MENTIONED', replyTo: parent });
    expect(await replies('reader', parent)).toEqual(['bob answers @reader']);
    expect(await replies('cat', parent)).toEqual(['bob answers @cat, again']);
    expect(await replies('dan', parent)).toEqual([]);
  });
});
