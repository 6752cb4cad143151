import type { Db } from 'mongodb';
import { authorsFingerprint } from '../../src/feed/strategies/timelineCache.js';

/**
 * Makes `followerHandles` follow `authorId`, writing the documented layout directly (edges, their
 * pairs, the counts): thousands of
 * accounts through the API would be thousands of password hashes. The followers count as active
 * readers; with `withCaches` each also has the timeline cache an empty first read leaves: no
 * entries, the fingerprint of whom they follow, and the mark that nothing is below.
 */
export async function insertFollowers(
  db: Db,
  authorId: string,
  followerHandles: readonly string[],
  options: { withCaches?: boolean } = {},
): Promise<void> {
  const now = new Date();
  await db.collection('users').insertMany(
    followerHandles.map((handle) => ({
      _id: handle as never,
      displayName: null,
      passwordHash: '-',
      createdAt: now,
      readAt: now,
      followerCount: 0,
      followingCount: 1,
    })),
  );
  await db.collection('following').insertMany(followerHandles.map((handle) => ({ _f: handle, _t: authorId })));
  await db.collection('followers').insertMany(followerHandles.map((handle) => ({ _f: authorId, _t: handle })));
  // Every edge has its settled pair, as a follow through the API leaves it.
  await db.collection('follow_pairs').insertMany(
    followerHandles.map((handle) => ({ _id: `${handle} ${authorId}` as never, f: handle, t: authorId, want: true, v: 1, applied: 1, counted: true, lease: null, dirty: false, updatedAt: now })),
  );
  await db.collection('users').updateOne({ _id: authorId as never }, { $inc: { followerCount: followerHandles.length } });
  if (options.withCaches) {
    await db.collection('timeline_cache').insertMany(
      followerHandles.map((handle) => ({ _id: handle as never, _c: [], _h: authorsFingerprint([handle, authorId]), _e: '' })),
    );
  }
}
