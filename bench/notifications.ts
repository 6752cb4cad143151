/**
 * The notifications page beside the timeline page in `npm run bench`: every sampled reader gets
 * notifications of each kind, written straight in the layout the workers leave (docs/notifications.md),
 * then a page is read through the API as a notification screen asks for it.
 */
import type { Db } from 'mongodb';
import type { NotificationDocument, NotificationKind } from '../src/records/notifications.js';
import { seededRandom, type GeneratedGraph } from './generate.js';

/** Notifications per sampled reader: more than a page, so `hasNextPage` and the unread count read on. */
export const notificationsPerReader = 60;

export const notificationsQuery = `query Notifications {
  notifications(first: 20) {
    edges { cursor node { id kind createdAt actorCount unread actors(first: 3) { handle displayName } post { id text } } }
    pageInfo { hasNextPage endCursor }
    unreadCount
  }
}`;

export const notificationsBody = JSON.stringify({ query: notificationsQuery });

const kinds: NotificationKind[] = ['LIKE', 'FOLLOW', 'REPOST', 'REPLY', 'MENTION'];

export async function seedNotifications(db: Db, graph: GeneratedGraph, readers: readonly string[], seed: number): Promise<void> {
  const random = seededRandom(seed + 7);
  const pick = <T>(items: readonly T[]) => items[Math.floor(random() * items.length)]!;
  const posts = (await db.collection('content').find({}, { projection: { _id: 1 } }).limit(5_000).toArray()).map((doc) => doc._id);
  const now = Date.now();
  const docs: NotificationDocument[] = readers.flatMap((reader) =>
    Array.from({ length: notificationsPerReader }, (_, i) => {
      const kind = kinds[i % kinds.length]!;
      const at = new Date(now - i * 60_000);
      const grouped = kind === 'LIKE' || kind === 'REPOST' || kind === 'FOLLOW';
      const actors = Array.from({ length: grouped ? 3 : 1 }, (_, j) => ({ u: pick(graph.handles), at: new Date(at.getTime() - j * 1000) }));
      const post = kind === 'FOLLOW' ? {} : { p: pick(posts) };
      return { _id: `${kind[0]!.toLowerCase()}:${reader}:${i}`, r: reader, k: kind, at, n: grouped ? 3 + (i % 7) : 1, a: actors, v: 1, ...post };
    }),
  );
  await db.collection<NotificationDocument>('notifications').insertMany(docs);
}
