import type { Collection } from 'mongodb';
import type { UserDocument } from '../records/users.js';
import type { UserDirectory } from './userDirectory.js';

/**
 * What the feed keeps on each user: when they last read (`readAt`, for skipping inactive readers),
 * the gap in a returning reader's timeline (`timelineGap`), and whether readers pull their posts
 * (`pulls`).
 */
export class UserFeedState {
  private readonly users: Collection<UserDocument>;

  constructor(private readonly directory: UserDirectory) {
    this.users = directory.users;
  }

  async ensureIndexes(): Promise<void> {
    await this.users.createIndex({ readAt: 1 }, { name: 'read_at' });
  }

  /** Which of `handles` have posts that readers pull. */
  async pullingAmong(handles: readonly string[]): Promise<string[]> {
    return [...(await this.directory.cached(handles)).values()].filter((user) => user.pulls).map((user) => user.record.handle);
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
