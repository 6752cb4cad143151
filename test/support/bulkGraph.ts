import type { Db } from 'mongodb';

/**
 * Makes `followerHandles` follow `authorId`, writing the documented layout directly: thousands of
 * accounts through the API would be thousands of password hashes. The followers count as active
 * readers; with `withCaches` each also has an (empty) timeline cache, as if they had read.
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
  await db.collection('users').updateOne({ _id: authorId as never }, { $inc: { followerCount: followerHandles.length } });
  if (options.withCaches) {
    await db.collection('timeline_cache').insertMany(followerHandles.map((handle) => ({ _id: handle as never, _c: [] })));
  }
}
