import type { Collection, ObjectId } from 'mongodb';
import {
  byPostId,
  byPostIds,
  editedBody,
  textUpdate,
  maxEditsKept,
  toPostRecord,
  type ContentDocument,
  type PostRecord,
  type StoredEdit,
} from '../records/posts.js';

/** What an edit left: the post as it is now, and its edit number (the first edit is 1). */
export interface TextEdited {
  post: PostRecord;
  version: number;
}

/**
 * A post's text replaced, with the text it had kept in its history: exact under concurrency
 * without transactions. Each edit reads the post, then writes guarded by the edit number it read
 * (`ev`) and bumps it, so of two racing edits one writes and the other reads again and writes on
 * top of it: the text last written is the last answered, and every text it replaced is pushed into
 * the history exactly once, by the edit that replaced it.
 */
export class TextEdits {
  constructor(private readonly content: Collection<ContentDocument>) {}

  /**
   * Replaces the text of a post (not a repost); null when there is no such post. `beforeWrite`
   * sees the post as read before each attempt and may refuse it by throwing (its author, who may
   * see it), or prepare what must exist before the write (`first`: on the first attempt only).
   */
  async edit(id: ObjectId, text: string, beforeWrite: (current: PostRecord, first: boolean) => Promise<void>): Promise<TextEdited | null> {
    for (let attempt = 0; ; attempt++) {
      const doc = await this.content.findOne({ ...byPostId(id), _o: { $exists: false } }, { projection: { eh: 0 } });
      if (!doc) return null;
      const current = toPostRecord(doc);
      await beforeWrite(current, attempt === 0);
      const read = doc.ev ?? 0;
      // Never before the edit it follows, so the history reads newest first even across clocks.
      const at = new Date(Math.max(Date.now(), (doc._e?.getTime() ?? 0) + 1));
      const body = editedBody(current.body, text, at);
      const earlier: StoredEdit = { m: doc._m, e: at };
      // Only the text and what is parsed from it (mentions, tags, search tokens): an image's alt text may change meanwhile.
      const { $set, $unset } = textUpdate(body, true);
      const written = await this.content.updateOne(
        { ...byPostId(id), ev: read === 0 ? { $exists: false } : read },
        {
          $set: { ...$set, ev: read + 1 },
          ...(Object.keys($unset).length > 0 ? { $unset } : {}),
          $push: { eh: { $each: [earlier], $position: 0, $slice: maxEditsKept } },
        },
      );
      if (written.matchedCount === 1) return { post: { ...current, body }, version: read + 1 };
    }
  }

  /**
   * The post's text, edit time and edit number into the reposts that carry its body, each copy
   * taking only a newer edit than it has: so racing edits leave every copy at the last one.
   */
  async copyInto(post: PostRecord, version: number, repostIds: readonly ObjectId[]): Promise<void> {
    if (repostIds.length === 0) return;
    const { $set, $unset } = textUpdate(post.body, false);
    await this.content.updateMany(
      { ...byPostIds(repostIds), '_o._id': post.id, $or: [{ ev: { $exists: false } }, { ev: { $lt: version } }] },
      { $set: { ...$set, ev: version }, ...(Object.keys($unset).length > 0 ? { $unset } : {}) },
    );
  }

  /** A post (not a repost) as it is now, with its edit number and the text its last edit replaced; null when there is none. */
  async current(id: ObjectId): Promise<(TextEdited & { replaced: string | null }) | null> {
    // Read whole (the history is at most 50 texts): a `$slice` projection alone means different things to different servers.
    const doc = await this.content.findOne({ ...byPostId(id), _o: { $exists: false } });
    return doc && { post: toPostRecord(doc), version: doc.ev ?? 0, replaced: doc.eh?.[0]?.m ?? null };
  }

  /** The earlier texts of these posts, newest first, by hex id: one query. */
  async historyOf(ids: readonly ObjectId[]): Promise<Map<string, StoredEdit[]>> {
    if (ids.length === 0) return new Map();
    const docs = await this.content.find({ ...byPostIds(ids), eh: { $exists: true } }, { projection: { eh: 1 } }).toArray();
    return new Map(docs.map((doc) => [doc._id.toHexString(), doc.eh ?? []]));
  }
}
