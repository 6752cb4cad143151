import type { Collection, ObjectId } from 'mongodb';
import { byPostId, textUpdate, toPostRecord, type ContentDocument } from '../records/posts.js';

/** Where the backfill resumes: after the last post id it wrote. */
export interface BackfillProgress {
  read(): Promise<ObjectId | null>;
  save(after: ObjectId): Promise<void>;
}

/**
 * Gives every post stored before posts carried their tags (`_tg`) and search tokens (`_w`) both,
 * through the write path's own mappers: the body as a read makes it (tags parsed by the one
 * parser), then `textUpdate(body, true)`, the update an edit writes into the post's own document.
 * Reposts are left as they are: they are found through their original. Posts in `_id` order, in
 * batches of `batchSize`, each batch's last id saved once it is written: a start killed half-way
 * resumes there, and a batch written again writes the same values. A post edited meanwhile (its
 * text changed, or its tokens written) is not overwritten. Returns how many posts it wrote.
 */
export async function backfillSearchTokens(content: Collection<ContentDocument>, progress: BackfillProgress, batchSize = 1000): Promise<number> {
  let written = 0;
  for (let after = await progress.read(); ; ) {
    const batch = await content
      .find({ ...(after ? { _id: { $gt: after } } : {}), _o: { $exists: false }, _w: { $exists: false } })
      .sort({ _id: 1 })
      .limit(batchSize)
      .toArray();
    if (batch.length === 0) return written;
    await content.bulkWrite(
      batch.map((doc) => ({
        updateOne: { filter: { ...byPostId(doc._id), _m: doc._m, _w: { $exists: false } }, update: textUpdate(toPostRecord(doc).body, true) },
      })),
      { ordered: false },
    );
    written += batch.length;
    after = batch[batch.length - 1]!._id;
    await progress.save(after);
  }
}
