import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { createClient, type Client } from 'graphql-ws';
import {
  commitLocalUpdate,
  ConnectionHandler,
  Environment,
  fetchQuery,
  Network,
  Observable,
  RecordSource,
  requestSubscription,
  Store,
  type GraphQLResponse,
  type GraphQLTaggedNode,
  type RequestParameters,
  type Variables,
} from 'relay-runtime';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import listQuery from '../../examples/relay/src/__generated__/profileListQuery.graphql.js';
import postAdded from '../../examples/relay/src/__generated__/profilePostAddedSubscription.graphql.js';
import profileQuery from '../../examples/relay/src/__generated__/profileQuery.graphql.js';
import postsPagination from '../../examples/relay/src/__generated__/ProfilePostsPaginationQuery.graphql.js';
import postRefetch from '../../examples/relay/src/__generated__/PostRefetchQuery.graphql.js';
import listPagination from '../../examples/relay/src/__generated__/ListTimelinePaginationQuery.graphql.js';
import { createPost, eventually, subscriptionsOpen } from '../live/liveClient.js';
import { startTestApp, type TestApp } from '../support/testApp.js';

const relayProject = fileURLToPath(new URL('../../examples/relay/', import.meta.url));
const compiler = fileURLToPath(new URL('../../node_modules/.bin/relay-compiler', import.meta.url));

/**
 * Relay over this API, as examples/relay/src/profile.ts writes it: relay-compiler accepts its
 * @refetchable fragments on User, Post and List and its @connection and @prependEdge against
 * schema.graphql, and the documents it generates page a profile both ways through `node(id:)`,
 * refetch a post and a list by their ids, and put a live post on top of the page once.
 */
describe('Relay', () => {
  let app: TestApp;
  let token: string;
  let environment: Environment;
  let socket: Client;

  beforeAll(async () => {
    app = await startTestApp();
    token = await app.signUp('rosa');
    for (const n of [1, 2, 3, 4, 5]) await createPost(app, token, `rosa ${n}`);
    socket = createClient({ url: app.url.replace(/^http/, 'ws'), connectionParams: () => ({ authorization: `Bearer ${token}` }), webSocketImpl: WebSocket, retryAttempts: 0 });
    const fetchFunction = async (params: RequestParameters, variables: Variables): Promise<GraphQLResponse> => {
      const response = await fetch(app.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({ query: params.text, operationName: params.name, variables }),
      });
      return (await response.json()) as GraphQLResponse;
    };
    const subscribeFunction = (params: RequestParameters, variables: Variables) =>
      Observable.create<GraphQLResponse>((sink) => socket.subscribe({ operationName: params.name, query: params.text!, variables }, sink as never));
    environment = new Environment({ network: Network.create(fetchFunction, subscribeFunction), store: new Store(new RecordSource()) });
  });
  afterAll(async () => {
    await socket?.dispose();
    await app?.stop();
  });

  /** What a query answers, as Relay gives it (each spread fragment's fields masked). */
  const run = (query: GraphQLTaggedNode, variables: Variables) =>
    fetchQuery(environment, query, variables).toPromise() as Promise<Record<string, unknown>>;

  /** The texts of the profile's cached page, top to bottom, as usePaginationFragment would render them. */
  const shownTexts = (userId: string): string[] => {
    let texts: string[] = [];
    commitLocalUpdate(environment, (store) => {
      const connection = ConnectionHandler.getConnection(store.get(userId)!, 'profile_posts')!;
      texts = connection.getLinkedRecords('edges')!.map((edge) => edge!.getLinkedRecord('node')!.getValue('text') as string);
    });
    return texts;
  };
  const pageInfo = (userId: string) => {
    let info: Record<string, unknown> = {};
    commitLocalUpdate(environment, (store) => {
      const record = ConnectionHandler.getConnection(store.get(userId)!, 'profile_posts')!.getLinkedRecord('pageInfo')!;
      info = { startCursor: record.getValue('startCursor'), endCursor: record.getValue('endCursor'), hasNextPage: record.getValue('hasNextPage') };
    });
    return info as { startCursor: string; endCursor: string; hasNextPage: boolean };
  };

  it('relay-compiler compiles the profile against schema.graphql, and its artifacts are current', async () => {
    const { stdout, stderr } = await promisify(execFile)(compiler, ['--validate'], { cwd: relayProject });
    expect(`${stdout}${stderr}`).not.toMatch(/ERROR/);
  }, 60_000);

  it('pages a profile forwards and backwards through node(id:), and merges the pages into one connection', async () => {
    expect((await run(profileQuery, { handle: 'rosa', first: 2 })).user).not.toBeNull();
    const userId = userIdOf('rosa');
    expect(userId).toBeTruthy();
    expect(shownTexts(userId!)).toEqual(['rosa 5', 'rosa 4']);
    await run(postsPagination, { id: userId!, first: 2, after: pageInfo(userId!).endCursor });
    expect(shownTexts(userId!)).toEqual(['rosa 5', 'rosa 4', 'rosa 3', 'rosa 2']);

    // A post written since: the page before the newest shown holds it, and only it.
    await createPost(app, token, 'rosa 6');
    await run(postsPagination, { id: userId!, first: null, last: 2, before: pageInfo(userId!).startCursor });
    expect(shownTexts(userId!)).toEqual(['rosa 6', 'rosa 5', 'rosa 4', 'rosa 3', 'rosa 2']);
  });

  it('puts a live post on top of the page with @prependEdge, and a refresh after it adds no duplicate', async () => {
    const userId = userIdOf('rosa')!;
    const connectionId = ConnectionHandler.getConnectionID(userId, 'profile_posts');
    const live = requestSubscription(environment, { subscription: postAdded, variables: { connections: [connectionId] } });
    try {
      await subscriptionsOpen(app, 1);
      await createPost(app, token, 'rosa live');
      await eventually(() => shownTexts(userId)[0] === 'rosa live', 'the live post is on top of the page');
      await run(postsPagination, { id: userId, first: null, last: 5, before: pageInfo(userId).startCursor });
      const texts = shownTexts(userId);
      expect(texts.filter((text) => text === 'rosa live')).toHaveLength(1);
      expect(texts.slice(0, 3)).toEqual(['rosa live', 'rosa 6', 'rosa 5']);
    } finally {
      live.dispose();
    }
  });

  it('refetches a post and a list by their global ids', async () => {
    const userId = userIdOf('rosa')!;
    let postId = '';
    commitLocalUpdate(environment, (store) => {
      const edge = ConnectionHandler.getConnection(store.get(userId)!, 'profile_posts')!.getLinkedRecords('edges')![1]!;
      postId = edge.getLinkedRecord('node')!.getDataID();
    });
    // Relay masks a fragment's fields in the query's own answer: what it fetched is read from the store.
    const fieldOf = (id: string, field: string) => {
      let value: unknown;
      commitLocalUpdate(environment, (store) => (value = store.get(id)?.getValue(field)));
      return value;
    };
    await app.gql('mutation($id: ID!) { likePost(id: $id) { id } }', { id: postId }, token);
    expect(fieldOf(postId, 'likeCount')).toBe(0);
    expect((await run(postRefetch, { id: postId })).node).not.toBeNull();
    expect(fieldOf(postId, 'likeCount')).toBe(1);
    expect(fieldOf(postId, 'viewerHasLiked')).toBe(true);

    const created = await app.gql('mutation { createList(name: "Friends") { id } }', {}, token);
    const listId = created.data.createList.id as string;
    expect((await run(listQuery, { id: listId })).list).not.toBeNull();
    await app.gql('mutation($id: ID!) { renameList(id: $id, name: "Close friends") { id } }', { id: listId }, token);
    expect((await run(listPagination, { id: listId, first: 5 })).node).not.toBeNull();
    expect(fieldOf(listId, 'name')).toBe('Close friends');
  });

  /** The record id Relay keys the user by: its global id, from the store. */
  function userIdOf(handle: string): string | undefined {
    let id: string | undefined;
    commitLocalUpdate(environment, (store) => {
      const user = store.getRoot().getLinkedRecord('user', { handle });
      id = user?.getDataID();
    });
    return id;
  }
});
