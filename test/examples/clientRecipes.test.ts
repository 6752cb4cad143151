import { execFile } from 'node:child_process';
import { readFile, readdir } from 'node:fs/promises';
import { promisify } from 'node:util';
import { CombinedError } from '@urql/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as apollo from '../../examples/clients/apollo.js';
import * as fetchRecipe from '../../examples/clients/fetch.js';
import * as graphqlRequest from '../../examples/clients/graphqlRequest.js';
import * as urql from '../../examples/clients/urql.js';
import * as uploadRecipe from '../../examples/clients/upload.js';
import { jpeg } from '../support/images.js';
import { createPost, eventually, follow, subscriptionsOpen } from '../live/liveClient.js';
import { startTestApp, type TestApp } from '../support/testApp.js';

/**
 * docs/clients.md shows the files of examples/clients/ verbatim (```ts file=…) and curl sessions
 * (```sh recipe=curl); this checks the text is the files' and runs every recipe against a real
 * server, as a user of each client would notice it.
 */
const docPath = new URL('../../docs/clients.md', import.meta.url);
const recipesDir = new URL('../../examples/clients/', import.meta.url);
const documentedUrl = 'http://localhost:4000/graphql';

interface Block {
  language: string;
  attributes: Record<string, string>;
  text: string;
}

async function docBlocks(): Promise<Block[]> {
  const doc = await readFile(docPath, 'utf8');
  return [...doc.matchAll(/^```(\w+)([^\n]*)\n([\s\S]*?)^```$/gm)].map(([, language, info, text]) => ({
    language: language!,
    attributes: Object.fromEntries([...info!.matchAll(/(\w+)=(\S+)/g)].map(([, key, value]) => [key!, value!])),
    text: text!,
  }));
}

describe('docs/clients.md recipes', () => {
  let app: TestApp;
  const tokens: Record<string, string> = {};

  beforeAll(async () => {
    app = await startTestApp();
    for (const handle of ['ada', 'grace', 'hopper', 'linus_fetch']) tokens[handle] = await app.signUp(handle);
    await follow(app, tokens.ada!, 'grace');
    await follow(app, tokens.hopper!, 'grace');
  });
  afterAll(() => app?.stop());

  it('shows every file of examples/clients/ exactly as it is, and nothing else as a file', async () => {
    const shown = (await docBlocks()).filter((block) => block.attributes.file);
    const files = (await readdir(recipesDir)).filter((name) => name.endsWith('.ts')).map((name) => `examples/clients/${name}`);
    expect(shown.map((block) => block.attributes.file).sort()).toEqual(files.sort());
    for (const block of shown) {
      const text = await readFile(new URL(`../../${block.attributes.file}`, import.meta.url), 'utf8');
      expect(block.text, `${block.attributes.file} as docs/clients.md shows it`).toBe(text);
    }
  });

  it('Uploading images: uploads, posts with alt text, and reports a refusal by its code', async () => {
    const photo = await uploadRecipe.uploadImage(app.url, tokens.hopper!, new Blob([new Uint8Array(await jpeg(64, 48))]), 'A test pattern');
    expect(photo).toMatchObject({ kind: 'IMAGE', alt: 'A test pattern', width: 64, height: 48 });
    const post = await uploadRecipe.postImages(app.url, tokens.hopper!, '', [photo]);
    expect(post.media.map((image) => image.id)).toEqual([photo.id]);
    expect((await fetch(post.media[0]!.url)).headers.get('content-type')).toBe('image/jpeg');
    const refused = await uploadRecipe.uploadImage(app.url, tokens.hopper!, new Blob(['<svg/>'])).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(uploadRecipe.UploadError);
    expect(refused).toMatchObject({ status: 415, code: 'UNSUPPORTED_MEDIA_TYPE' });
  });

  it('Apollo Client: pages, refreshes with only newer posts, and adds a live post once', async () => {
    for (const text of ['one', 'two', 'three']) await createPost(app, tokens.grace!, `grace ${text}`);
    const client = apollo.createFeedClient(app.url, () => tokens.ada!);
    try {
      const feed = apollo.watchTimeline(client, 2);
      let shown: apollo.TimelineData['timeline'] | undefined;
      const watching = feed.query.subscribe(({ data }) => {
        if (data?.timeline) shown = data.timeline as apollo.TimelineData['timeline'];
      });
      const texts = () => shown?.edges.map((edge) => edge.node.text) ?? [];
      await eventually(() => texts().length === 2, 'the first page');
      expect(texts()).toEqual(['grace three', 'grace two']);
      expect(shown!.pageInfo.hasNextPage).toBe(true);

      await feed.loadOlder(shown!.pageInfo.endCursor!);
      await eventually(() => texts().length === 3, 'the older page appended');
      expect(texts()).toEqual(['grace three', 'grace two', 'grace one']);

      // Without `first: undefined` Apollo would send the query's `first` along with `last`.
      await expect(feed.query.fetchMore({ variables: { last: 2, before: shown!.pageInfo.startCursor } })).rejects.toThrow(/not both/);

      await createPost(app, tokens.grace!, 'grace four');
      const refreshed = await feed.refresh(shown!.pageInfo.startCursor!);
      expect(refreshed.data?.timeline?.edges?.map((edge) => edge?.node?.text)).toEqual(['grace four']);
      await eventually(() => texts().length === 4, 'the newer post on top');
      expect(texts()[0]).toBe('grace four');

      feed.followLive();
      await subscriptionsOpen(app, 1);
      await createPost(app, tokens.grace!, 'grace live');
      await eventually(() => texts()[0] === 'grace live', 'the live post on top');
      expect(texts().filter((text) => text === 'grace live')).toHaveLength(1);
      expect(shown!.pageInfo.startCursor).toBe(shown!.edges[0]!.cursor);
      const afterLive = await feed.refresh(shown!.pageInfo.startCursor!);
      expect(afterLive.data?.timeline?.edges).toEqual([]);
      expect(texts()).toEqual(['grace live', 'grace four', 'grace three', 'grace two', 'grace one']);
      watching.unsubscribe();
    } finally {
      client.stop();
      await eventually(() => app.services.live.stats().subscriptions === 0, 'the subscription is closed', 10_000);
    }
  });

  it('Apollo Client: markNotificationsRead shows the notifications read in the cache without a refetch', async () => {
    const { gql } = await import('@apollo/client');
    const client = apollo.createFeedClient(app.url, () => tokens.grace!);
    try {
      type Notifications = { notifications: { edges: { cursor: string; node: { id: string; unread: boolean } }[]; unreadCount: number } };
      const notifications = gql`query Notifications { notifications(first: 5) { edges { cursor node { id unread } } unreadCount } }`;
      const read = await client.query<Notifications>({ query: notifications });
      const edges = read.data!.notifications.edges;
      expect(edges.length).toBeGreaterThan(0);
      expect(edges.every((edge) => edge.node.unread)).toBe(true);
      const marked = await client.mutate({
        mutation: gql`mutation Mark($upTo: String!) { markNotificationsRead(upTo: $upTo) { unreadCount notifications { id unread } } }`,
        variables: { upTo: edges[0]!.cursor },
      });
      expect(marked.data).toMatchObject({ markNotificationsRead: { unreadCount: 0 } });
      // Read from the cache alone: the mutation's answer updated each notification by its id.
      const cached = client.readQuery<Notifications>({ query: notifications })!;
      expect(cached.notifications.edges.map((edge) => edge.node.unread)).toEqual(edges.map(() => false));
    } finally {
      client.stop();
    }
  });

  it('urql: a default client gets 400 from CSRF prevention; the recipe keeps one list, a refresh and a live post on top', async () => {
    const { Client, fetchExchange } = await import('@urql/core');
    const naive = new Client({ url: app.url, exchanges: [fetchExchange], fetchOptions: { headers: { authorization: `Bearer ${tokens.hopper}` } } });
    const refused = await naive.query(urql.TIMELINE, { first: 2 }).toPromise();
    expect(refused.error).toBeInstanceOf(CombinedError);
    expect((refused.error!.response as Response | undefined)?.status).toBe(400);

    const client = urql.createFeedClient(app.url, () => tokens.hopper!);
    const feed = urql.watchTimeline(client, 2);
    const texts = (connection: urql.TimelineConnection) => connection.edges.map((edge) => edge.node.text);
    const first = texts(await feed.first());
    expect(first).toHaveLength(2);
    const withOlder = texts(await feed.older());
    expect(withOlder).toHaveLength(4);
    expect(withOlder.slice(0, 2)).toEqual(first);

    // relayPagination({ mergeMode: 'outwards' }): the refresh lands on top, not below the oldest.
    await createPost(app, tokens.grace!, 'grace refreshed for urql');
    expect(texts(await feed.newer())).toEqual(['grace refreshed for urql', ...withOlder]);

    const live = feed.followLive();
    try {
      await subscriptionsOpen(app, 1);
      await createPost(app, tokens.grace!, 'grace to urql');
      let shown: string[] = [];
      await eventually(() => {
        void feed.newer().then((connection) => (shown = texts(connection)));
        return shown[0] === 'grace to urql';
      }, 'the live post on top');
      expect(shown.filter((text) => text === 'grace to urql')).toHaveLength(1);
      expect(shown.slice(1)).toEqual(['grace refreshed for urql', ...withOlder]);
    } finally {
      live.unsubscribe();
      await eventually(() => app.services.live.stats().subscriptions === 0, 'the subscription is closed', 10_000);
    }
  });

  it('graphql-request: signs up, reads the whole timeline page by page, and reports error codes', async () => {
    const anonymous = graphqlRequest.createFeedClient(app.url);
    const { signUp } = await anonymous.request<{ signUp: { token: string } }>(graphqlRequest.SIGN_UP, { handle: 'margaret', password: 'correct horse' });
    const client = graphqlRequest.createFeedClient(app.url, signUp.token);
    await follow(app, signUp.token, 'grace');
    const all = await graphqlRequest.wholeTimeline(client, 2);
    const expected = await app.gql('{ timeline(first: 100) { edges { node { id } } } }', {}, signUp.token);
    expect(all.map((edge) => edge.node.id)).toEqual(expected.data.timeline.edges.map((edge: any) => edge.node.id));
    expect(all.length).toBeGreaterThan(2);
    const mixed = await client.request('{ timeline(first: 2, last: 2) { edges { cursor } } }').catch(graphqlRequest.errorCode);
    expect(mixed).toBe('BAD_USER_INPUT');
    const noToken = await anonymous.request(graphqlRequest.TIMELINE, { first: 2 }).catch(graphqlRequest.errorCode);
    expect(noToken).toBe('UNAUTHENTICATED');
  });

  it('plain fetch and graphql-ws: a page, an error code, and a live post', async () => {
    const token = tokens.linus_fetch!;
    await fetchRecipe.graphql(app.url, 'mutation { follow(handle: "grace") { handle } }', {}, token);
    const page = await fetchRecipe.graphql<{ timeline: { edges: { node: { text: string } }[] } }>(
      app.url, 'query($n: Int) { timeline(first: $n) { edges { node { text } } } }', { n: 3 }, token);
    expect(page.timeline.edges).toHaveLength(3);
    const refused = await fetchRecipe.graphql(app.url, '{ timeline { edges { cursor } } }').catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(fetchRecipe.GraphQLRequestError);
    expect((refused as fetchRecipe.GraphQLRequestError).code).toBe('UNAUTHENTICATED');

    const live = fetchRecipe.livePosts(app.url, () => token);
    try {
      const next = live.events.next();
      await subscriptionsOpen(app, 1);
      await createPost(app, tokens.grace!, 'grace to fetch');
      const event = await next;
      expect(event.done).toBe(false);
      expect(event.value?.data?.timelinePostAdded.node.text).toBe('grace to fetch');
    } finally {
      await live.close();
      await eventually(() => app.services.live.stats().subscriptions === 0, 'the subscription is closed', 10_000);
    }
  });

  it('a refused token on the socket reaches the app from its first connection in every recipe, with no retry', async () => {
    const revoked = await app.signUp('revoked_reader');
    await app.gql('mutation { logOutEverywhere }', {}, revoked);
    const refusal = async (subscribe: (token: () => string, signedOut: () => void) => Promise<unknown>) => {
      let signedOut = 0;
      // graphql-ws reads the token once per connection (connectionParams): a retry would read it again.
      let connections = 0;
      const ended = await subscribe(() => (connections++, revoked), () => signedOut++);
      return { connections, code: (ended as { code?: number }).code, signedOut };
    };

    const viaApollo = await refusal((token, signedOut) => {
      const client = apollo.createFeedClient(app.url, token, signedOut);
      return new Promise((resolve) =>
        // Apollo Client 4 gives a subscription's error as a result; GraphQLWsLink words a close
        // as "Socket closed with event <code> <reason>".
        client.subscribe({ query: apollo.POST_ADDED }).subscribe((result) => {
          if (!result.error) return;
          client.stop();
          resolve({ code: Number(/with event (\d+)/.exec(result.error.message)?.[1]) });
        }),
      );
    });
    const viaUrql = await refusal((token, signedOut) => {
      const client = urql.createFeedClient(app.url, token, signedOut);
      return new Promise((resolve) => {
        const subscription = client.subscription(urql.POST_ADDED, {}).subscribe((result) => {
          if (!result.error) return;
          subscription.unsubscribe();
          resolve({ code: (result.error.networkError as unknown as { code?: number } | undefined)?.code });
        });
      });
    });
    const viaFetch = await refusal(async (token, signedOut) => {
      const live = fetchRecipe.livePosts(app.url, token);
      try {
        return await live.events.next().then(() => ({}), (closed: unknown) => (fetchRecipe.isRefusedToken(closed) && signedOut(), closed));
      } finally {
        await live.close();
      }
    });
    for (const [recipe, result] of Object.entries({ apollo: viaApollo, urql: viaUrql, fetch: viaFetch })) {
      expect(result.code, recipe).toBe(4403);
      expect(result.signedOut, recipe).toBe(1);
      // Counted, not timed: graphql-ws's first retry waits only a second or so, which a loaded machine's delays can match.
      expect(result.connections, recipe).toBe(1);
    }
  });

  it('curl: every session in the doc runs as written against the real URL', async () => {
    const sessions = (await docBlocks()).filter((block) => block.attributes.recipe === 'curl');
    expect(sessions.length).toBeGreaterThan(0);
    for (const session of sessions) {
      expect(session.text).toContain(documentedUrl);
      const script = session.text.replaceAll(documentedUrl, app.url);
      const { stdout } = await promisify(execFile)('bash', ['-euo', 'pipefail', '-c', script], { timeout: 20_000 });
      const answers = stdout.split('\n').filter(Boolean).map((line) => JSON.parse(line) as { data?: any; errors?: unknown });
      for (const answer of answers) expect(answer.errors, stdout).toBeUndefined();
      expect(stdout).toContain('"text":"Hello from curl"');
      expect(stdout).toContain('"viewer":{"handle":"linus"}');
    }
  });
});
