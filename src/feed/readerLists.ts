import type { ObjectId } from 'mongodb';
import { changed, type ChangePublisher } from '../changes/events.js';
import type { Page, PageRequest } from '../content/position.js';
import { notFound } from '../errors.js';
import type { UserDirectory } from '../graph/userDirectory.js';
import type { UserLists } from '../graph/userLists.js';
import { parseListId, type ListRecord } from '../records/lists.js';
import type { ListPageRequest } from '../records/pages.js';
import type { HandlePage } from '../records/users.js';
import type { PostRecord } from '../records/posts.js';
import type { PageLoads } from './timelineEntry.js';
import type { TimelineReading } from './timelineReading.js';

export interface ReaderListsDependencies {
  lists: UserLists;
  users: Pick<UserDirectory, 'getUser'>;
  reading: Pick<TimelineReading, 'listTimeline' | 'showsInListLive'>;
  changes: ChangePublisher;
}

const unknownList = (id: string) => notFound(`No list with id "${id}"`);

/**
 * A reader's lists (see UserLists for how they are kept): every change is announced on the change
 * bus, so every instance forgets what it holds of the owner's lists; their timelines are read
 * through TimelineReading, with the owner's filters.
 */
export class ReaderLists {
  constructor(private readonly deps: ReaderListsDependencies) {}

  listsOf(ownerId: string): Promise<ListRecord[]> {
    return this.deps.lists.listsOf(ownerId);
  }

  /** Null for an unknown list and for another account's: lists are private to their owner. */
  async find(ownerId: string, id: string): Promise<ListRecord | null> {
    const listId = parseListId(id);
    return listId && this.deps.lists.find(ownerId, listId);
  }

  async create(ownerId: string, name: string): Promise<ListRecord> {
    const list = await this.deps.lists.create(ownerId, name);
    await this.announce(ownerId);
    return list;
  }

  async rename(ownerId: string, id: string, name: string): Promise<ListRecord> {
    const list = await this.deps.lists.rename(ownerId, this.listId(id), name);
    await this.announce(ownerId);
    return list;
  }

  async delete(ownerId: string, id: string): Promise<boolean> {
    await this.deps.lists.delete(ownerId, this.listId(id));
    await this.announce(ownerId);
    return true;
  }

  async addMember(ownerId: string, id: string, handle: string): Promise<ListRecord> {
    const listId = this.listId(id);
    await this.existingUser(handle);
    try {
      return await this.deps.lists.addMember(ownerId, listId, handle);
    } finally {
      // Also after a refusal: a list deleted meanwhile may have had the member for a moment.
      await this.announce(ownerId);
    }
  }

  async removeMember(ownerId: string, id: string, handle: string): Promise<ListRecord> {
    const listId = this.listId(id);
    await this.existingUser(handle);
    const list = await this.deps.lists.removeMember(ownerId, listId, handle);
    await this.announce(ownerId);
    return list;
  }

  members(list: ListRecord, page: ListPageRequest<string>): Promise<HandlePage> {
    return this.deps.lists.members(list.ownerId, list.id, page);
  }

  memberCounts(ownerId: string, ids: readonly ObjectId[]): Promise<Map<string, number>> {
    return this.deps.lists.memberCounts(ownerId, ids);
  }

  /** Empty when the list went away after it was read. */
  async timeline(list: ListRecord, request: PageRequest, loads: PageLoads): Promise<Page<PostRecord>> {
    const held = await this.deps.lists.heldList(list.ownerId, list.id);
    if (!held) return { items: [], hasMore: false };
    return this.deps.reading.listTimeline(list.ownerId, held, request, loads);
  }

  /** Refuses a subscription to an unknown list, or another account's. */
  async assertListOf(ownerId: string, id: string): Promise<void> {
    if (!(await this.find(ownerId, id))) throw unknownList(id);
  }

  /** Whether a post just stored belongs in the list's timeline now; false once the list is gone. */
  async showsLive(ownerId: string, id: string, post: PostRecord): Promise<boolean> {
    const listId = parseListId(id);
    const held = listId && (await this.deps.lists.heldList(ownerId, listId));
    return held ? this.deps.reading.showsInListLive(ownerId, held, post) : false;
  }

  private listId(id: string): ObjectId {
    const listId = parseListId(id);
    if (!listId) throw unknownList(id);
    return listId;
  }

  private async existingUser(handle: string): Promise<void> {
    if (!(await this.deps.users.getUser(handle))) throw notFound(`No user with handle "${handle}"`);
  }

  private announce(ownerId: string): Promise<void> {
    return this.deps.changes.publish(changed({ lists: [ownerId] }));
  }
}
