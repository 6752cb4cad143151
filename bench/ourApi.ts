/**
 * This API under load, for the workload and Socialite benchmarks: the users' tokens and follow
 * lists, the GraphQL operations of the traffic mix, and a server started as `npm start` would.
 */
import type { Db } from 'mongodb';
import { loadConfig, type FeedStrategyName, type TimelineContentMode } from '../src/config.js';
import { createServices } from '../src/services.js';
import type { GeneratedGraph } from './generate.js';
import { createPostMutation, timelineQuery } from './measure.js';
import { buildTimelines, progressBar } from './prepare.js';
import { startServerProcess, type ServerProcess } from './serverProcess.js';
import { FollowTracker, type Operations, type Send, type Session } from './traffic.js';

const jwtSecret = 'bench-secret-that-is-at-least-32-characters';

export interface ServedStrategy {
  strategy: FeedStrategyName;
  mode: TimelineContentMode;
  processes: number;
  execution: 'compiled' | 'interpreted';
  profileDir: string | null;
}

export interface World {
  handles: string[];
  authorization: Map<string, string>;
  /** Who each user follows now; follow and unfollow keep it current, so unfollows hit real follows. */
  followees: FollowTracker;
}

/**
 * Builds the strategy's timelines from the loaded data, mints every user's token and starts the
 * server in processes of its own (production mode, in-memory stand-in or MONGODB_URI's server).
 */
export async function serveStrategy(db: Db, uri: string, graph: GeneratedGraph, served: ServedStrategy): Promise<{ server: ServerProcess; world: World }> {
  const environment = {
    JWT_SECRET: jwtSecret,
    FEED_STRATEGY: served.strategy,
    TIMELINE_CONTENT: served.mode,
    GRAPHQL_EXECUTION: served.execution,
    WEB_CONCURRENCY: String(served.processes),
    // Several processes need the change stream to share live events and invalidations; one does not.
    LIVE_EVENTS: served.processes > 1 ? 'change-stream' : 'local',
    // The benchmarks measure the service, not its abuse limits.
    RATE_LIMIT_POSTS_PER_MINUTE: '1000000',
    RATE_LIMIT_FOLLOWS_PER_MINUTE: '1000000',
    MONGODB_URI: uri,
  };
  const config = loadConfig(environment);
  await buildTimelines(db, config, `${served.strategy}/${served.mode}`, graph.posts);
  const services = createServices(db, config);
  const edges: (readonly [string, string])[] = [];
  for await (const edge of db.collection<{ _f: string; _t: string }>('following').find({}, { projection: { _f: 1, _t: 1 } })) edges.push([edge._f, edge._t]);
  const world: World = {
    handles: graph.handles,
    authorization: new Map(await Promise.all(graph.handles.map(async (handle) => [handle, `Bearer ${await services.accounts.tokenFor(handle)}`] as const))),
    followees: new FollowTracker(graph.handles, edges),
  };
  const server = await startServerProcess(
    { ...environment, NODE_ENV: 'production', DATA_DIR: ':memory:' },
    served.profileDir ? ['--cpu-prof', `--cpu-prof-dir=${served.profileDir}`] : [],
  );
  return { server, world };
}

/** Every user's first page once, so no measurement pays for building caches (the cache strategy builds one per reader). */
export async function readEveryTimelineOnce(label: string, users: readonly string[], read: NonNullable<Operations['read']>, send: Send, concurrency: number): Promise<void> {
  const bar = progressBar(`${label} first reads`);
  bar.start(users.length, 0);
  let done = 0;
  let failed = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async (_, lane) => {
      for (let i = lane; i < users.length; i += concurrency) {
        const ok = await read({ user: users[i]!, cursor: null, seenPostIds: [], remaining: 1 }, send).then(({ ok }) => ok, () => false);
        if (!ok) failed++;
        bar.update(++done);
      }
    }),
  );
  bar.stop();
  if (failed > 0) console.error(`${label}: ${failed} of ${users.length} first reads failed`);
}

/** A post's id and when its createPost answer arrived (performance.now()), for the delivery lag. */
export type OnPosted = (author: string, postId: string, answeredAt: number) => void;

/** The GraphQL operations of the mix, as the reference web client would send them. */
export function graphqlOperations(world: World, random: () => number, readQuery = timelineQuery, onPosted?: OnPosted): Operations {
  const call = async (send: Send, user: string, query: string, variables: Record<string, unknown>) => {
    const reply = await send('POST', '/graphql', { 'content-type': 'application/json', authorization: world.authorization.get(user)! }, JSON.stringify({ query, variables }));
    const json = JSON.parse(reply.body) as { data?: any; errors?: unknown };
    return { ok: reply.status === 200 && !json.errors && json.data != null, data: json.data };
  };
  const readPage = async (session: Session, send: Send, after: string | null) => {
    const { ok, data } = await call(send, session.user, readQuery, { after });
    const timeline = data?.timeline;
    session.cursor = timeline?.pageInfo.hasNextPage ? timeline.pageInfo.endCursor : null;
    session.seenPostIds = timeline ? timeline.edges.map((edge: { node: { id: string } }) => edge.node.id) : [];
    return ok;
  };
  const pick = <T>(items: readonly T[]) => items[Math.floor(random() * items.length)];
  return {
    read: async (session, send) => ({ ran: 'read', ok: await readPage(session, send, null) }),
    scroll: async (session, send) =>
      session.cursor ? { ran: 'scroll', ok: await readPage(session, send, session.cursor) } : { ran: 'read', ok: await readPage(session, send, null) },
    readOwn: async (session, send) => ({
      ran: 'readOwn',
      ok: (await call(send, session.user, ownPostsQuery, { handle: session.user })).ok,
    }),
    post: async (session, send) => {
      const { ok, data } = await call(send, session.user, createPostMutation, { text: `workload post by ${session.user} at ${Date.now()}` });
      if (ok && onPosted) onPosted(session.user, data.createPost.id, performance.now());
      return { ran: 'post', ok };
    },
    like: async (session, send) => {
      const id = pick(session.seenPostIds);
      if (!id) return { ran: 'read', ok: await readPage(session, send, null) };
      return { ran: 'like', ok: (await call(send, session.user, likeMutation, { id })).ok };
    },
    follow: async (session, send) => {
      const handle = world.followees.pickToFollow(session.user, random);
      if (handle === null) return { ran: 'read', ok: await readPage(session, send, null) };
      const { ok } = await call(send, session.user, followMutation, { handle });
      if (!ok) world.followees.undo('follow', session.user, handle);
      return { ran: 'follow', ok };
    },
    unfollow: async (session, send) => {
      const handle = world.followees.pickToUnfollow(session.user, random);
      if (handle === null) return { ran: 'read', ok: await readPage(session, send, null) };
      const { ok } = await call(send, session.user, unfollowMutation, { handle });
      if (!ok) world.followees.undo('unfollow', session.user, handle);
      return { ran: 'unfollow', ok };
    },
  };
}

const ownPostsQuery = 'query Own($handle: String!) { user(handle: $handle) { posts(first: 20) { edges { node { id text createdAt } } } } }';
const likeMutation = 'mutation Like($id: ID!) { likePost(id: $id) { id likeCount } }';
const followMutation = 'mutation Follow($handle: String!) { follow(handle: $handle) { handle followerCount } }';
const unfollowMutation = 'mutation Unfollow($handle: String!) { unfollow(handle: $handle) { handle followerCount } }';

