import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { feedStrategies, timelineContentModes } from '../../src/config.js';
import { follow } from '../live/liveClient.js';
import { internalId } from '../support/ids.js';
import { startTestApp, type TestApp } from '../support/testApp.js';
import { heardEverything } from '../support/announcements.js';
import { twoInstancesWithAFollowChain } from '../support/twoInstances.js';
import { noRequest } from '../../src/observability/requestScope.js';

const combinations = feedStrategies.flatMap((strategy) => timelineContentModes.map((content) => ({ strategy, content })));

const create = async (app: TestApp, token: string, text: string, extra = ''): Promise<string> => {
  const answer = await app.gql(`mutation($text: String!) { createPost(text: $text${extra}) { id } }`, { text }, token);
  expect(answer.errors).toBeUndefined();
  return answer.data.createPost.id;
};

const edit = (app: TestApp, token: string, id: string, text: string) =>
  app.gql('mutation($id: ID!, $text: String!) { editPost(id: $id, text: $text) { id text editedAt edits { text editedAt } visibility } }', { id, text }, token);

describe.each(combinations)('editing a post: FEED_STRATEGY=$strategy TIMELINE_CONTENT=$content', ({ strategy, content }) => {
  let app: TestApp;
  const tokens: Record<string, string> = {};

  beforeAll(async () => {
    app = await startTestApp({ FEED_STRATEGY: strategy, TIMELINE_CONTENT: content });
    for (const handle of ['ada', 'bea', 'cal', 'dan']) tokens[handle] = await app.signUp(handle);
    await follow(app, tokens.bea!, 'ada');
    await follow(app, tokens.cal!, 'bea');
  });
  afterAll(() => app?.stop());

  it('reaches the post, its reposts and every timeline that shows it; the history keeps the earlier text', async () => {
    const id = await create(app, tokens.ada!, 'teh first text');
    await app.settled();
    await app.gql('mutation($id: ID!) { repost(id: $id) { id } }', { id }, tokens.bea);
    await app.settled();
    const texts = async () => {
      const pages = await Promise.all(['ada', 'bea', 'cal'].map((handle) => app.gql('{ timeline { edges { node { id text editedAt } } } }', {}, tokens[handle])));
      const shown = pages.flatMap((page) => page.data.timeline.edges.filter((edge: any) => edge.node.id === id).map((edge: any) => edge.node.text));
      const single = await app.gql('query($id: ID!) { post(id: $id) { text } }', { id }, tokens.cal);
      return [...shown, single.data.post.text];
    };
    expect(await texts()).toEqual(['teh first text', 'teh first text', 'teh first text', 'teh first text']);

    const edited = await edit(app, tokens.ada!, id, 'the first text');
    expect(edited.errors).toBeUndefined();
    expect(edited.data.editPost.text).toBe('the first text');
    expect(edited.data.editPost.editedAt).not.toBeNull();
    expect(edited.data.editPost.edits).toEqual([{ text: 'teh first text', editedAt: edited.data.editPost.editedAt }]);
    await app.settled();
    expect(await texts()).toEqual(['the first text', 'the first text', 'the first text', 'the first text']);
    const marked = await app.gql('{ timeline { edges { node { id editedAt } } } }', {}, tokens.cal);
    expect(marked.data.timeline.edges.find((edge: any) => edge.node.id === id).node.editedAt).toBe(edited.data.editPost.editedAt);
  });

  it('is the author\'s only, follows the text rules, and answers NOT_FOUND for what the viewer may not see', async () => {
    const id = await create(app, tokens.ada!, 'mine');
    expect((await edit(app, tokens.bea!, id, 'yours now')).errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect((await edit(app, tokens.ada!, id, '   ')).errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect((await edit(app, tokens.ada!, id, 'x'.repeat(501))).errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    const secret = await create(app, tokens.ada!, 'for followers', ', visibility: FOLLOWERS');
    expect((await edit(app, tokens.dan!, secret, 'hijacked')).errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    // Nothing half-written: the refused edits left the post as it was.
    const post = await app.gql('query($id: ID!) { post(id: $id) { text editedAt edits { text } } }', { id }, tokens.ada);
    expect(post.data.post).toEqual({ text: 'mine', editedAt: null, edits: [] });
  });

  it('ends concurrent edits in the last answered text, every earlier text in the history once', async () => {
    const id = await create(app, tokens.ada!, 'version 0');
    const texts = Array.from({ length: 8 }, (_, index) => `version ${index + 1}`);
    const answers = await Promise.all(texts.map((text) => edit(app, tokens.ada!, id, text)));
    for (const answer of answers) expect(answer.errors).toBeUndefined();
    const post = await app.gql('query($id: ID!) { post(id: $id) { text edits { text editedAt } } }', { id }, tokens.ada);
    const history = post.data.post.edits.map((entry: any) => entry.text);
    expect(history).toHaveLength(8);
    expect(new Set([post.data.post.text, ...history])).toEqual(new Set(['version 0', ...texts]));
    expect(history.at(-1)).toBe('version 0');
    // Newest first.
    const times = post.data.post.edits.map((entry: any) => Date.parse(entry.editedAt));
    expect([...times].sort((a, b) => b - a)).toEqual(times);
    // Each answer tells when its edit was written (edits of one post are written one after another,
    // each later than the one before): the one written last is the text that stays.
    const written = answers.map((answer) => answer.data.editPost).sort((a, b) => Date.parse(b.editedAt) - Date.parse(a.editedAt));
    expect(new Set(written.map((answer) => answer.editedAt)).size).toBe(8);
    expect(written[0].text).toBe(post.data.post.text);
    expect(written.slice(1).map((answer) => answer.text)).toEqual(history.slice(0, 7));
  });

  it('never lets a rewrite that read the post before a later edit put the older text back', async () => {
    const id = await create(app, tokens.ada!, 'draft');
    await app.settled();
    const textIn = async (handle: string) =>
      (await app.gql('{ timeline { edges { node { id text } } } }', {}, tokens[handle])).data.timeline.edges.find((edge: any) => edge.node.id === id)?.node.text;
    // Read once, so that every strategy holds the entry in its stored timelines.
    for (const handle of ['ada', 'bea']) expect(await textIn(handle)).toBe('draft');
    await edit(app, tokens.ada!, id, 'first fix');
    // What a worker read for the first edit's rewrite, before the second edit landed.
    const readEarly = (await app.services.content.lookups.getEntry(internalId(id)))!;
    await edit(app, tokens.ada!, id, 'second fix');
    await app.settled();
    // That worker writes only now, after the second edit's rewrite.
    await app.services.feed.backend.rewrite(['ada', 'bea'], readEarly);
    for (const handle of ['ada', 'bea']) expect(await textIn(handle)).toBe('second fix');
  });

  it('keeps visibility, media links and a mentioned-only audience as posted', async () => {
    const id = await create(app, tokens.ada!, 'hi @bea', ', visibility: MENTIONED');
    const edited = await edit(app, tokens.ada!, id, 'hi @bea and @dan');
    expect(edited.data.editPost.visibility).toBe('MENTIONED');
    expect((await app.gql('query($id: ID!) { post(id: $id) { id } }', { id }, tokens.dan)).data.post).toBeNull();
    expect((await app.gql('query($id: ID!) { post(id: $id) { text } }', { id }, tokens.bea)).data.post.text).toBe('hi @bea and @dan');
  });
});

describe('mentions changed by an edit', () => {
  let app: TestApp;
  const tokens: Record<string, string> = {};

  beforeAll(async () => {
    app = await startTestApp();
    for (const handle of ['ada', 'bea', 'cal']) tokens[handle] = await app.signUp(handle);
  });
  afterAll(() => app?.stop());

  const mentions = async (handle: string) =>
    (await app.gql('{ notifications(kinds: [MENTION]) { edges { node { kind } } } }', {}, tokens[handle])).data.notifications.edges.length;

  it('tell a newly mentioned account once, and take back the notification of one no longer mentioned', async () => {
    const id = await create(app, tokens.ada!, 'hello @bea');
    await app.settled();
    expect(await mentions('bea')).toBe(1);
    expect(await mentions('cal')).toBe(0);
    await edit(app, tokens.ada!, id, 'hello @cal');
    await app.settled();
    expect(await mentions('bea')).toBe(0);
    expect(await mentions('cal')).toBe(1);
    await edit(app, tokens.ada!, id, 'hello again @cal');
    await app.settled();
    expect(await mentions('cal')).toBe(1);
    // The notification shows the post as it is now.
    const shown = await app.gql('{ notifications(kinds: [MENTION]) { edges { node { post { text editedAt } } } } }', {}, tokens.cal);
    expect(shown.data.notifications.edges[0].node.post.text).toBe('hello again @cal');
  });

  it('keeps at most 50 earlier texts', async () => {
    const id = await create(app, tokens.ada!, 'edit 0');
    for (let index = 1; index <= 55; index++) await edit(app, tokens.ada!, id, `edit ${index}`);
    const post = await app.gql('query($id: ID!) { post(id: $id) { text edits { text } } }', { id }, tokens.ada);
    expect(post.data.post.text).toBe('edit 55');
    expect(post.data.post.edits).toHaveLength(50);
    expect(post.data.post.edits[0].text).toBe('edit 54');
    expect(post.data.post.edits[49].text).toBe('edit 5');
  });
});

/** The request dies right after its guarded write: the safety net it queued first carries the edit. */
describe.each(['time-buckets', 'cache'])('an edit whose request died after writing the post: %s', (strategy) => {
  let app: TestApp;
  const tokens: Record<string, string> = {};

  beforeAll(async () => {
    app = await startTestApp({ FEED_STRATEGY: strategy, FANOUT_WORKERS: '0' });
    for (const handle of ['ada', 'bea', 'cal']) tokens[handle] = await app.signUp(handle);
    await follow(app, tokens.bea!, 'ada');
    await follow(app, tokens.cal!, 'bea');
  });
  afterAll(() => app?.stop());

  it('is finished by the queue: the reposts and every embedded entry take the new text, each copy old or new', async () => {
    const { runQueued } = await import('../support/queuedTasks.js');
    const { internalId } = await import('../support/ids.js');
    const id = await create(app, tokens.ada!, 'said first');
    await runQueued(app);
    await app.gql('mutation($id: ID!) { repost(id: $id) { id } }', { id }, tokens.bea);
    await runQueued(app);
    const texts = async () => {
      const pages = await Promise.all(['ada', 'bea', 'cal'].map((handle) => app.gql('{ timeline { edges { node { id text } } } }', {}, tokens[handle])));
      return pages.flatMap((page) => page.data.timeline.edges.filter((edge: any) => edge.node.id === id).map((edge: any) => edge.node.text));
    };
    expect(await texts()).toEqual(['said first', 'said first', 'said first']);

    // What editPost does up to its guarded write, and no further: the safety net, then the post.
    const postId = internalId(id);
    await app.services.fanout.enqueueLater({ _id: `edit-copies:${id}:died`, kind: 'edit-copies', payload: { postId }, runAt: new Date() }, noRequest);
    const written = await app.services.content.textEdits.edit(postId, 'said better', async () => {});
    expect(written?.version).toBe(1);
    // Every copy is the old text or the new, never a mix: each embedded entry is rewritten whole.
    for (const text of await texts()) expect(['said first', 'said better']).toContain(text);

    await runQueued(app);
    expect(await texts()).toEqual(['said better', 'said better', 'said better']);
    const shown = await app.gql('query($id: ID!) { post(id: $id) { text editedAt edits { text } } }', { id }, tokens.cal);
    expect(shown.data.post).toMatchObject({ text: 'said better', edits: [{ text: 'said first' }] });
  });
});

/** Strategies whose copies live longest in a process: the cache's timelines, fanout on read's outboxes. */
describe.each(['cache', 'fanout-on-read', 'time-buckets'])('an edit on two instances: %s', (strategy) => {
  const instances = twoInstancesWithAFollowChain(strategy);

  it('reaches every copy the other instance holds once it has heard the edit, long before a held copy expires: timelines, reposts, the post, the author\'s page', async () => {
    const { a, b, tokens } = instances;
    const id = await create(a, tokens.ada!, 'before');
    await a.settled();
    await b.gql('mutation($id: ID!) { repost(id: $id) { id } }', { id }, tokens.bea);
    await a.settled();
    const read = async () => {
      const pages = await Promise.all(['ada', 'bea', 'cal'].map((handle) => b.gql('{ timeline { edges { node { id text } } } }', {}, tokens[handle])));
      const single = await b.gql('query($id: ID!) { post(id: $id) { text } user(handle: "ada") { posts { edges { node { id text } } } } }', { id }, tokens.cal);
      const shown = pages.flatMap((page) => page.data.timeline.edges.filter((edge: any) => edge.node.id === id).map((edge: any) => edge.node.text));
      const authored = single.data.user.posts.edges.filter((edge: any) => edge.node.id === id).map((edge: any) => edge.node.text);
      return [...shown, single.data.post.text, ...authored];
    };
    // Instance B holds every copy now.
    expect(await read()).toEqual(['before', 'before', 'before', 'before', 'before']);
    expect(await read()).toEqual(['before', 'before', 'before', 'before', 'before']);

    expect((await edit(a, tokens.ada!, id, 'after')).errors).toBeUndefined();
    // Ordered, not timed (a one-second deadline broke on loaded machines): once B has heard what A announced after
    // the edit, one read finds every copy changed; without the announcement they would wait out their time limit (10 s or more).
    await heardEverything(a, b);
    expect(await read()).toEqual(['after', 'after', 'after', 'after', 'after']);
  });
});
