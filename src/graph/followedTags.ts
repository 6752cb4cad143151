import type { Collection } from 'mongodb';
import { badInput } from '../errors.js';
import type { UserDocument } from '../records/users.js';
import { existingUsers, type UserDirectory } from './userDirectory.js';

/** At most this many followed tags per account: each is one more value of a page's `$in`. */
export const maxFollowedTags = 100;

/**
 * The tags a user follows, kept on their user document (`followedTags`), so a timeline page finds
 * them with the user this process already holds: a reader who follows no tag pays nothing, and
 * one who does pays one query per page for all their tags together.
 */
export class FollowedTags {
  private readonly users: Collection<UserDocument>;

  constructor(private readonly directory: UserDirectory) {
    this.users = directory.users;
  }

  /** The tags the user follows, from the user this process holds. */
  async of(userId: string): Promise<readonly string[]> {
    return (await this.directory.cached([userId])).get(userId)?.followedTags ?? [];
  }

  /**
   * Follows `tag` (normalised by the caller); idempotent. Refused past `maxFollowedTags`, by the
   * update's own filter, so two racing follows cannot pass the limit together.
   */
  async follow(userId: string, tag: string): Promise<readonly string[]> {
    const result = await this.users.updateOne(
      { _id: userId, ...existingUsers, followedTags: { $ne: tag }, [`followedTags.${maxFollowedTags - 1}`]: { $exists: false } },
      { $push: { followedTags: tag } },
    );
    this.directory.forget([userId]);
    const tags = await this.of(userId);
    if (result.modifiedCount === 0 && !tags.includes(tag)) throw badInput(`You can follow at most ${maxFollowedTags} tags`);
    return tags;
  }

  /** Stops following `tag`; idempotent. */
  async unfollow(userId: string, tag: string): Promise<readonly string[]> {
    await this.users.updateOne({ _id: userId }, { $pull: { followedTags: tag } });
    this.directory.forget([userId]);
    return this.of(userId);
  }
}
