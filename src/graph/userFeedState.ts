import type { Collection } from 'mongodb';
import type { UserDocument } from '../records/users.js';
import type { InboxSources } from '../content/contentService.js';
import type { UserDirectory } from './userDirectory.js';
import { plannedIndexes } from '../db/shardPlan.js';

/**
 * What the feed keeps on each user: when they last read (`readAt`, for skipping inactive readers),
 * the gap in a returning reader's timeline (`timelineGap`), whether readers pull their posts
 * (`pulls`), and where readers may find their limited posts (`followersOnly`, `inbox`).
 */
export class UserFeedState {
  private readonly users: Collection<UserDocument>;

  constructor(private readonly directory: UserDirectory) {
    this.users = directory.users;
  }

  async ensureIndexes(): Promise<void> {
    await plannedIndexes(this.users, [{ key: { readAt: 1 }, name: 'read_at' }]);
  }

  /**
   * Where a reader's limited posts are: whether any mentioned-only post concerns them, and which
   * of the reader and `followees` wrote followers-only posts. From the users this process holds.
   */
  async inboxSources(readerId: string, followees: readonly string[]): Promise<InboxSources> {
    return (await this.readerSources(readerId, followees)).inbox;
  }

  /**
   * What a page merges besides the reader's timeline, from the users this process holds in one
   * pass: the followees whose posts are pulled (the reader's own come from their outbox), and the
   * reader's inbox sources.
   */
  async readerSources(
    readerId: string,
    followees: readonly string[],
  ): Promise<{ pulling: string[]; inbox: InboxSources; followingVersion: number; followedTags: readonly string[] }> {
    const users = await this.directory.cached([readerId, ...followees]);
    const pulling: string[] = [];
    const followersOnlyAuthors: string[] = [];
    for (const user of users.values()) {
      if (user.pulls && user.record.handle !== readerId) pulling.push(user.record.handle);
      if (user.followersOnly) followersOnlyAuthors.push(user.record.handle);
    }
    const reader = users.get(readerId);
    return {
      pulling,
      inbox: { readerId, addressed: reader?.inbox === true, followersOnlyAuthors },
      followingVersion: reader?.followingVersion ?? 0,
      followedTags: reader?.followedTags ?? [],
    };
  }

  /** Whether these users have the marks of limited posts (see `markLimited`), from the users this process holds. */
  async limitedMarks(handles: readonly string[]): Promise<Map<string, { followersOnly: boolean; inbox: boolean }>> {
    const users = await this.directory.cached(handles);
    return new Map([...users].map(([handle, user]) => [handle, { followersOnly: user.followersOnly, inbox: user.inbox }]));
  }

  /**
   * Before a limited post is stored: marks its author as writing followers-only posts, or its
   * author and audience as having an inbox. Returns the users newly marked, for other instances
   * to forget.
   */
  async markLimited(authorId: string, visibility: 'FOLLOWERS' | 'MENTIONED', audience: readonly string[]): Promise<string[]> {
    const [field, handles] = visibility === 'FOLLOWERS' ? (['followersOnly', [authorId]] as const) : (['inbox', [authorId, ...audience]] as const);
    const held = await this.directory.cached(handles);
    const unmarked = handles.filter((handle) => !held.get(handle)?.[field]);
    if (unmarked.length === 0) return [];
    await this.users.updateMany({ _id: { $in: unmarked }, [field]: { $exists: false } }, { $set: { [field]: true } });
    this.directory.forget(unmarked);
    return unmarked;
  }

  /** Marks the author as one whose posts readers pull, before the first such post is stored. */
  async markPulling(handle: string): Promise<boolean> {
    const result = await this.users.updateOne({ _id: handle, pulls: { $exists: false } }, { $set: { pulls: true } });
    if (result.modifiedCount === 0) return false;
    this.directory.forget([handle]);
    return true;
  }

  /**
   * Which of `handles` read their timeline at or after `since`: one query per sub-task. A user
   * without `readAt` (written by an older version or a bulk load) counts as active.
   */
  async activeReadersAmong(handles: readonly string[], since: Date): Promise<string[]> {
    if (handles.length === 0) return [];
    const docs = await this.users
      .find({ _id: { $in: [...handles] }, readAt: { $not: { $lt: since } } }, { projection: { _id: 1 } })
      .toArray();
    return docs.map((doc) => doc._id);
  }

  /** What the read path needs to know about a reader's own activity. */
  async readerActivity(handle: string): Promise<Pick<UserDocument, 'readAt' | 'timelineGap'> | null> {
    return this.users.findOne({ _id: handle }, { projection: { readAt: 1, timelineGap: 1 } });
  }

  /**
   * Marks the read of a reader who read at or after `since` (an active one), in the write that
   * answers what the read path needs to know: the reader's open gap, if any. Null, with nothing
   * written, for a reader who is not active: a returning reader's gap must be opened before the
   * read is marked (see ReaderActivity).
   */
  markActiveRead(handle: string, at: Date, since: Date): Promise<Pick<UserDocument, 'timelineGap'> | null> {
    return this.users.findOneAndUpdate({ _id: handle, readAt: { $gte: since } }, { $max: { readAt: at } }, { projection: { _id: 0, timelineGap: 1 } });
  }

  async markRead(handle: string, at: Date): Promise<void> {
    await this.users.updateOne({ _id: handle }, { $max: { readAt: at } });
  }

  /** Opens a gap unless one is open already (a concurrent read of the same returning reader). */
  async openTimelineGap(handle: string, from: Date): Promise<void> {
    await this.users.updateOne({ _id: handle, timelineGap: { $exists: false } }, { $set: { timelineGap: { from, since: new Date() } } });
  }

  /** Closes the gap that `since` identifies; a newer gap stays open. */
  async closeTimelineGap(handle: string, since: Date): Promise<void> {
    await this.users.updateOne({ _id: handle, 'timelineGap.since': since }, { $unset: { timelineGap: '' } });
  }
}
