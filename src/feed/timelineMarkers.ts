import type { Collection } from 'mongodb';
import type { ContentService } from '../content/contentService.js';
import { decodeCursor, type PageRequest, type PostPosition } from '../content/position.js';
import { AppError, badInput } from '../errors.js';
import type { UserDirectory } from '../graph/userDirectory.js';
import { existingUsers as live } from '../graph/userDirectory.js';
import type { UserGraphService } from '../graph/userGraphService.js';
import type { TimelineMarkerRecord } from '../records/posts.js';
import type { UserDocument } from '../records/users.js';
import type { PageLoads } from './timelineEntry.js';
import type { TimelineReader } from './timelineReading.js';

/** Unread posts are counted up to this; beyond, the count shows this. */
export const maxUnreadCount = 1000;

/** A position as a string that orders as positions do: 15-digit epoch ms, then the id's hex. */
const positionKey = (position: PostPosition) => `${String(position.createdAt.getTime()).padStart(15, '0')}:${position.id.toHexString()}`;

const foreignCursor = () => badInput('This cursor names no post of your timeline: pass a cursor the timeline query returned');

/**
 * The timeline read marker (Mastodon's `markers`): one position per account, kept on the user
 * document, so every device and instance reads the same one. It only moves forward: the update
 * is conditional on the stored key being older, so racing marks end at the newest, whatever their
 * order. Its unread count pages the viewer's own timeline newer than the marker, through the same
 * reader (filters, mutes, blocks, deletions), at most 1,001 entries: never a count over history.
 */
export class TimelineMarkers {
  private readonly users: Collection<UserDocument>;

  constructor(
    directory: UserDirectory,
    private readonly graph: Pick<UserGraphService, 'followingIds'>,
    private readonly content: ContentService,
    private readonly reader: Pick<TimelineReader, 'timeline'>,
  ) {
    this.users = directory.users;
  }

  async read(userId: string): Promise<TimelineMarkerRecord> {
    const doc = await this.users.findOne({ _id: userId, ...live }, { projection: { timelineMarker: 1 } });
    if (!doc) throw new AppError('UNAUTHENTICATED', 'This account no longer exists');
    const marker = doc.timelineMarker;
    return { readerId: userId, position: marker ? { createdAt: marker.at, id: marker.id } : null, updatedAt: marker?.updatedAt ?? null };
  }

  /**
   * Moves the marker to `cursor` unless it is already there or further. The cursor must name a
   * stored post or repost, at its own time, by the reader or someone they follow: a forged
   * position could otherwise put the marker past every post to come.
   */
  async mark(userId: string, cursor: string): Promise<TimelineMarkerRecord> {
    const position = decodeCursor(cursor);
    const [entry, followees] = await Promise.all([this.content.lookups.getEntry(position.id), this.graph.followingIds(userId)]);
    if (!entry || entry.createdAt.getTime() !== position.createdAt.getTime()) throw foreignCursor();
    if (entry.authorId !== userId && !followees.includes(entry.authorId)) throw foreignCursor();
    const k = positionKey(position);
    await this.users.updateOne(
      { _id: userId, ...live, $or: [{ 'timelineMarker.k': { $exists: false } }, { 'timelineMarker.k': { $lt: k } }] },
      { $set: { timelineMarker: { k, at: position.createdAt, id: position.id, updatedAt: new Date() } } },
    );
    return this.read(userId);
  }

  /** Posts of the reader's timeline newer than the marker (all of it without one), at most `maxUnreadCount`. */
  async unreadCount(marker: TimelineMarkerRecord, loads: PageLoads): Promise<number> {
    const request: PageRequest = marker.position
      ? { direction: 'newer', from: marker.position, limit: maxUnreadCount }
      : { direction: 'older', from: null, limit: maxUnreadCount };
    const page = await this.reader.timeline(marker.readerId, request, loads);
    return Math.min(page.items.length, maxUnreadCount);
  }
}
