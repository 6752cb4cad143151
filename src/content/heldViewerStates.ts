import { LRUCache } from 'lru-cache';
import { ObjectId } from 'mongodb';
import { heldCaches } from '../config.js';
import { everyEvent, type HeldScope } from '../changes/partitions.js';
import { cacheCounters } from '../observability/metrics.js';

/** One viewer's held states: on or off, by hex post id, newest first out when there are too many. */
interface ViewerHeld {
  states: Map<string, boolean>;
  /** When each post's state was last forgotten (see `HeldViewerStates.epoch`), while loads are under way. */
  forgotten: Map<string, number>;
  loading: number;
}

/**
 * Which posts each viewer has liked, reposted or bookmarked, held in this process (Weibo's
 * existence cache): a page asks for its twenty posts and reads only those not held, in one query.
 * Held per viewer, so a page costs one lookup of the viewer, not one per post. A change of the
 * viewer's state of a post (on this instance or, through its announcement, on any other) forgets
 * it, so the next page reads it again: forgetting needs no order between announcements, where
 * setting a state in place would; a load that was under way when a post was forgotten keeps
 * nothing of that post.
 */
export class HeldViewerStates {
  private readonly viewers: LRUCache<string, ViewerHeld>;
  /** Grows with every forget and every load, so a load knows what was forgotten after it began. */
  private epoch = 0;
  private readonly counted: ReturnType<typeof cacheCounters>;

  constructor(
    name: string,
    /** The posts among `postIds` the viewer's state is on for: one query. */
    private readonly load: (viewerId: string, postIds: readonly ObjectId[]) => Promise<Set<string>>,
    /** Viewers whose changes this instance hears of; another's states are read every time. */
    private readonly scope: HeldScope = everyEvent,
  ) {
    const { viewers, maxPosts, ttlMs } = heldCaches.viewerStates;
    this.viewers = new LRUCache({ max: viewers, ttl: ttlMs, maxSize: maxPosts, sizeCalculation: (held) => held.states.size + 1 });
    this.counted = cacheCounters(name);
  }

  /** Of `postIds`, the hex ids of those the viewer's state is on for; one query for those not held. */
  async among(viewerId: string, postIds: readonly ObjectId[]): Promise<Set<string>> {
    const on = new Set<string>();
    if (postIds.length === 0) return on;
    if (!this.scope.holdsPerson(viewerId)) {
      // Their changes are announced to another instance group: nothing held here would be forgotten.
      this.counted.miss(postIds.length);
      return this.load(viewerId, postIds);
    }
    let held = this.viewers.get(viewerId);
    if (!held) {
      held = { states: new Map(), forgotten: new Map(), loading: 0 };
      this.viewers.set(viewerId, held);
    }
    const missing: ObjectId[] = [];
    for (const id of postIds) {
      const hex = id.toHexString();
      const state = held.states.get(hex);
      if (state === undefined) missing.push(id);
      else if (state) on.add(hex);
    }
    this.counted.hit(postIds.length - missing.length);
    if (missing.length === 0) return on;
    this.counted.miss(missing.length);
    const started = ++this.epoch;
    held.loading++;
    try {
      const loaded = await this.load(viewerId, missing);
      for (const id of missing) {
        const hex = id.toHexString();
        const state = loaded.has(hex);
        if (state) on.add(hex);
        // Forgotten after this load began: what it read may predate the change.
        if ((held.forgotten.get(hex) ?? 0) < started) held.states.set(hex, state);
      }
      while (held.states.size > heldCaches.viewerStates.postsPerViewer) held.states.delete(held.states.keys().next().value!);
      // Set again, so the bound on all viewers' posts counts what this one holds now.
      if (this.viewers.peek(viewerId) === held) this.viewers.set(viewerId, held, { noUpdateTTL: true });
    } finally {
      if (--held.loading === 0) held.forgotten.clear();
    }
    return on;
  }

  /** The viewer's state of these posts changed. */
  forget(viewerId: string, postIds: readonly ObjectId[]): void {
    const held = this.viewers.peek(viewerId);
    if (!held) return;
    const at = ++this.epoch;
    for (const id of postIds) {
      const hex = id.toHexString();
      held.states.delete(hex);
      if (held.loading > 0) held.forgotten.set(hex, at);
    }
  }
}
