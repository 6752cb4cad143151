import { expect } from 'vitest';
import type { TestApp } from '../support/testApp.js';

export interface ShownNotification {
  kind: string;
  actorCount: number;
  actors: string[];
  post: string | null;
  unread: boolean;
  cursor: string;
  createdAt: string;
}

export const notificationsQuery = `query($first: Int, $after: String, $kinds: [NotificationKind!]) {
  notifications(first: $first, after: $after, kinds: $kinds) {
    edges { cursor node { id kind createdAt actorCount actors { handle } post { id text } unread } }
    pageInfo { hasNextPage endCursor }
    unreadCount
  }
}`;

/** The viewer's notifications once the workers have built them, as a client sees them. */
export async function notificationsOf(
  app: TestApp,
  token: string,
  variables: { first?: number; after?: string; kinds?: string[] } = {},
): Promise<{ items: ShownNotification[]; unreadCount: number; hasNextPage: boolean; endCursor: string | null }> {
  await app.settled();
  const result = await app.gql(notificationsQuery, variables, token);
  if (!result.data) throw new Error(JSON.stringify(result.errors));
  const { edges, pageInfo, unreadCount } = result.data.notifications;
  return {
    items: edges.map((edge: any) => ({
      kind: edge.node.kind,
      actorCount: edge.node.actorCount,
      actors: edge.node.actors.map((actor: any) => actor.handle),
      post: edge.node.post?.id ?? null,
      unread: edge.node.unread,
      cursor: edge.cursor,
      createdAt: edge.node.createdAt,
    })),
    unreadCount,
    hasNextPage: pageInfo.hasNextPage,
    endCursor: pageInfo.endCursor,
  };
}

/** `kind actorCount [actors] ` per notification, newest first: what a notification screen lists. */
export async function listed(app: TestApp, token: string, variables: { kinds?: string[] } = {}): Promise<string[]> {
  const { items } = await notificationsOf(app, token, { first: 100, ...variables });
  return items.map((item) => `${item.kind} ${item.actorCount} [${item.actors.join(',')}]`);
}

export async function createPost(app: TestApp, token: string, text: string, replyTo?: string): Promise<string> {
  const result = await app.gql('mutation($text: String!, $replyTo: ID) { createPost(text: $text, replyTo: $replyTo) { id } }', { text, replyTo }, token);
  if (!result.data) throw new Error(JSON.stringify(result.errors));
  return result.data.createPost.id as string;
}

export async function act(app: TestApp, token: string, mutation: string, variables: Record<string, unknown> = {}): Promise<any> {
  const declared = Object.keys(variables).map((name) => `$${name}: ${name === 'id' ? 'ID!' : 'String!'}`);
  const result = await app.gql(`mutation${declared.length ? `(${declared.join(', ')})` : ''} { ${mutation} }`, variables, token);
  if (result.errors) throw new Error(JSON.stringify(result.errors));
  return result.data;
}

export const like = (app: TestApp, token: string, id: string) => act(app, token, 'likePost(id: $id) { id }', { id });
export const unlike = (app: TestApp, token: string, id: string) => act(app, token, 'unlikePost(id: $id) { id }', { id });
export const repost = (app: TestApp, token: string, id: string) => act(app, token, 'repost(id: $id) { id }', { id });
export const undoRepost = (app: TestApp, token: string, id: string) => act(app, token, 'undoRepost(id: $id) { id }', { id });
export const follow = (app: TestApp, token: string, handle: string) => act(app, token, 'follow(handle: $handle) { handle }', { handle });
export const unfollow = (app: TestApp, token: string, handle: string) => act(app, token, 'unfollow(handle: $handle) { handle }', { handle });

/** The documents that hold each grouped kind's members, and the field naming the actor. */
const memberStores = { l: ['likes', 'u'], r: ['reposts', 'u'], f: ['follow_pairs', 'f'] } as const;

/**
 * At rest (nothing mid-change), every group counts exactly its members, and shows exactly the
 * newest `min(n, 20)` of them, newest first; no member is mid-change, and, after a pruning pass,
 * no group keeps a token or stays empty.
 */
export async function expectGroupsExact(app: TestApp): Promise<void> {
  const { db } = app.database;
  await app.services.feed.repairStalled();
  for (const [collection] of Object.values(memberStores)) {
    expect(await db.collection(collection).countDocuments({ gc: { $exists: true } }), `${collection} mid-change`).toBe(0);
  }
  const groups = await db.collection<any>('notifications').find({ k: { $in: ['LIKE', 'REPOST', 'FOLLOW'] } }).toArray();
  for (const group of groups) {
    const [collection, actor] = memberStores[group._id[0] as keyof typeof memberStores];
    const members = await db.collection<any>(collection).find({ g: group._id }).toArray();
    const newest = members
      .map((member) => ({ u: member[actor] as string, at: member.ga as Date }))
      .sort((a, b) => b.at.getTime() - a.at.getTime() || (a.u < b.u ? 1 : -1))
      .slice(0, 20);
    expect({ group: group._id, n: group.n, a: group.a.map((shown: { u: string }) => shown.u) }).toEqual({ group: group._id, n: members.length, a: newest.map((member) => member.u) });
    expect(group.tk ?? [], group._id).toEqual([]);
    expect(group.n, group._id).toBeGreaterThan(0);
  }
}
