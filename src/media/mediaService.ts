/**
 * media/ owns uploaded images: checking and re-encoding them (imageProcessing.ts), their bytes in
 * GridFS (mediaBytes.ts), their signed URLs (mediaUrls.ts), and here the `media` collection: who
 * uploaded what, which post it belongs to, and every step of an upload's life, each recorded
 * before it is taken so that a crash anywhere is finished by the sweep.
 */
import { ObjectId, type Collection, type Db } from 'mongodb';
import type { Readable } from 'node:stream';
import type { MediaOptions } from '../config.js';
import type { ContentService } from '../content/contentService.js';
import { assertDisplayableText } from '../content/text.js';
import { plannedCollection, plannedIndexes } from '../db/shardPlan.js';
import { findStalled, stalledSince } from '../db/stalledWork.js';
import { AppError, badInput, notFound } from '../errors.js';
import {
  maxAltLength,
  maxMediaPerPost,
  parseMediaId,
  toDescriptor,
  type MediaDescriptor,
  type MediaDocument,
  type MediaRecord,
  type MediaVariant,
  type VariantDocument,
} from '../records/media.js';
import { processImage, type EncodedImage } from './imageProcessing.js';
import { MediaBytes } from './mediaBytes.js';
import { MediaUrls } from './mediaUrls.js';

/** An upload still `storing` this long after it began lost its request (an upload takes seconds). */
const stalledUploadMs = 5 * 60_000;
/** A claim for a post not stored this long after lost its request, which stores the post within milliseconds. */
const stalledClaimMs = 60_000;
/** An alt text change not carried to its post this long after lost its request. */
const stalledEditMs = 60_000;
/** Images marked gone this long ago that are still here lost the request that was deleting them. */
const stalledGoneMs = 5 * 60_000;

/** What serving one variant needs: its headers, and its bytes as a stream. */
export interface ServedVariant {
  variant: VariantDocument;
  open(): Readable;
}

export class MediaService {
  readonly media: Collection<MediaDocument>;
  readonly bytes: MediaBytes;
  readonly urls: MediaUrls;
  private nextSweepAt = 0;

  constructor(
    db: Db,
    readonly options: MediaOptions,
    secret: Uint8Array,
    private readonly content: { lookups: Pick<ContentService['lookups'], 'existing'> },
  ) {
    this.media = plannedCollection<MediaDocument>(db, 'media');
    this.bytes = new MediaBytes(db);
    this.urls = new MediaUrls(secret, options.urlTtlSeconds);
  }

  async ensureIndexes(): Promise<void> {
    await Promise.all([
      this.bytes.ensureIndexes(),
      plannedIndexes(this.media, [
        // An account's uploads, for deleting them with it.
        { key: { owner: 1 }, name: 'by_owner' },
        // The sweep: stalled, orphaned and gone uploads, by state and age.
        { key: { state: 1, at: 1 }, name: 'by_state_age' },
        { key: { state: 1, goneAt: 1 }, name: 'gone_by_age', partialFilterExpression: { goneAt: { $exists: true } } },
        // The sweep: attachments not yet confirmed, and alt text changes under way.
        { key: { claimedAt: 1 }, name: 'pending_claims', partialFilterExpression: { claimedAt: { $exists: true } } },
        { key: { editedAt: 1 }, name: 'pending_edits', partialFilterExpression: { editedAt: { $exists: true } } },
      ]),
    ]);
  }

  /**
   * Checks, processes and stores one upload of `owner`; resolves once it is `ready`. The document
   * goes first, naming the files to come, then the bytes, then the state: a crash leaves a
   * `storing` document that no one is shown and the sweep deletes with its bytes.
   */
  async store(owner: string, input: Buffer, alt: string | null): Promise<MediaDocument> {
    const altText = checkedAlt(alt);
    const image = await processImage(input, { maxPixels: this.options.maxPixels });
    const { full, preview } = image;
    const variant = ({ data: _data, ...stored }: EncodedImage): VariantDocument => ({ file: new ObjectId(), ...stored });
    const doc: MediaDocument = {
      _id: new ObjectId(),
      owner,
      state: 'storing',
      at: new Date(),
      alt: altText,
      width: image.width,
      height: image.height,
      blurhash: image.blurhash,
      size: input.length,
      variants: { full: variant(full), preview: variant(preview) },
    };
    await this.media.insertOne(doc);
    try {
      const file = (name: MediaVariant, data: Buffer) => ({
        id: doc.variants[name].file,
        filename: `${doc._id.toHexString()}/${name}`,
        data,
        metadata: { media: doc._id, contentType: doc.variants[name].type },
      });
      await this.bytes.write([file('full', full.data), file('preview', preview.data)]);
      await this.media.updateOne({ _id: doc._id, state: 'storing' }, { $set: { state: 'ready' } });
    } catch (error) {
      await this.discard([doc]).catch(() => {});
      throw error;
    }
    return { ...doc, state: 'ready' };
  }

  /** An image as the API answers it to someone who may see it: its descriptor and URLs under `origin`. */
  record(media: MediaDescriptor, origin: string): MediaRecord {
    const base = this.options.publicUrl ?? origin;
    return { ...media, url: base + this.urls.sign(media.id, 'full').path, previewUrl: base + this.urls.sign(media.id, 'preview').path };
  }

  /**
   * Claims `ids`, uploads of `owner` not attached yet, for the post `postId` about to be stored,
   * and returns their descriptors in the order given. All or none: a claim that loses a race to
   * another post gives back what it took. Two commands: the request stores the post right after,
   * and the sweep confirms the claim later (`claimedAt`), or gives the images back to their owner
   * when the post never was stored.
   */
  async claim(owner: string, ids: readonly string[], postId: ObjectId): Promise<MediaDescriptor[]> {
    if (ids.length === 0) return [];
    if (ids.length > maxMediaPerPost) throw badInput(`A post takes at most ${maxMediaPerPost} images`);
    const parsed = ids.map((id) => {
      const mediaId = parseMediaId(id);
      if (!mediaId) throw notFound(`No upload with id "${id}"`);
      return mediaId;
    });
    if (new Set(parsed.map((id) => id.toHexString())).size !== ids.length) throw badInput('The same image is attached twice');
    const docs = new Map((await this.media.find({ _id: { $in: parsed } }, { projection: { variants: 0 } }).toArray()).map((doc) => [doc._id.toHexString(), doc]));
    for (const [index, id] of ids.entries()) {
      const doc = docs.get(parsed[index]!.toHexString());
      if (!doc || doc.state !== 'ready') throw notFound(`No upload with id "${id}"`);
      if (doc.owner !== owner) throw new AppError('FORBIDDEN', `Upload "${id}" is another account's`);
      if (doc.post) throw badInput(`Upload "${id}" is already attached to a post`);
    }
    const { modifiedCount } = await this.media.updateMany(
      { _id: { $in: parsed }, owner, state: 'ready', post: { $exists: false } },
      { $set: { post: postId, claimedAt: new Date() } },
    );
    if (modifiedCount !== parsed.length) {
      await this.release(parsed, postId);
      throw badInput('An image is already attached to a post');
    }
    return parsed.map((id) => toDescriptor(docs.get(id.toHexString())!));
  }

  /** Gives back what a post that will not be stored had claimed: the owner may attach them again. */
  async release(ids: readonly ObjectId[], postId: ObjectId): Promise<void> {
    if (ids.length === 0) return;
    await this.media.updateMany({ _id: { $in: [...ids] }, post: postId, state: 'ready' }, { $unset: { post: '', claimedAt: '' } });
  }

  /** The post is being deleted: from now on no URL of its images answers. Repeatable. */
  async markGone(ids: readonly ObjectId[]): Promise<void> {
    if (ids.length === 0) return;
    await this.media.updateMany({ _id: { $in: [...ids] }, state: { $ne: 'gone' } }, { $set: { state: 'gone', goneAt: new Date() } });
  }

  /** Deletes the bytes and documents of a deleted post's images, marked gone before. Repeatable. */
  async deleteGone(ids: readonly ObjectId[]): Promise<void> {
    if (ids.length === 0) return;
    await this.discard(await this.media.find({ _id: { $in: [...ids] }, state: 'gone' }).toArray());
  }

  /** The account is being deleted: no URL of any of its images answers any more. Repeatable. */
  async markGoneOfOwner(owner: string): Promise<void> {
    await this.media.updateMany({ owner, state: { $ne: 'gone' } }, { $set: { state: 'gone', goneAt: new Date() } });
  }

  /** Deletes every image of the account, attached or not, with its bytes. Repeatable. */
  async deleteOfOwner(owner: string): Promise<void> {
    await this.markGoneOfOwner(owner);
    for (let docs = await this.ofOwner(owner); docs.length > 0; docs = await this.ofOwner(owner)) await this.discard(docs);
  }

  private ofOwner(owner: string): Promise<MediaDocument[]> {
    return this.media.find({ owner }).limit(100).toArray();
  }

  /**
   * Sets an image's alt text, its owner only. Returns the image as it is now; when it is attached,
   * the change is marked under way (`editedAt`) until its post's copies have it (see PostEdits).
   */
  async setAlt(owner: string, id: string, alt: string | null | undefined): Promise<MediaDocument> {
    const altText = checkedAlt(alt);
    const mediaId = parseMediaId(id);
    const doc = mediaId && (await this.media.findOne({ _id: mediaId }, { projection: { variants: 0 } }));
    if (!doc || doc.state !== 'ready') throw notFound(`No upload with id "${id}"`);
    if (doc.owner !== owner) throw new AppError('FORBIDDEN', 'Only the uploader can change an image’s alt text');
    const edit = doc.post ? { editedAt: new Date() } : {};
    const updated = await this.media.findOneAndUpdate(
      { _id: doc._id, state: 'ready' },
      { $set: { alt: altText, ...edit } },
      { returnDocument: 'after', projection: { variants: 0 } },
    );
    if (!updated) throw notFound(`No upload with id "${id}"`);
    return updated;
  }

  /** The alt text change made at `at` is in every copy of its post: no longer under way. */
  async edited(mediaId: ObjectId, at: Date): Promise<void> {
    await this.media.updateOne({ _id: mediaId, editedAt: at }, { $unset: { editedAt: '' } });
  }

  /** A `ready` image by id, whoever asks (the caller decides who may see it), without its variants. */
  async found(id: ObjectId): Promise<MediaDocument | null> {
    return this.media.findOne({ _id: id, state: 'ready' }, { projection: { variants: 0 } });
  }

  /** One variant of a `ready` image (none for any other), to serve. */
  async toServe(id: ObjectId, variant: MediaVariant): Promise<ServedVariant | null> {
    const doc = await this.media.findOne({ _id: id, state: 'ready' }, { projection: { variants: 1 } });
    if (!doc) return null;
    const stored = doc.variants[variant];
    return { variant: stored, open: () => this.bytes.read(stored.file) };
  }

  /**
   * Finishes what dead requests left and deletes what no one will: uploads stalled while storing,
   * uploads never attached within MEDIA_ORPHAN_HOURS, gone images whose deletion stopped, and
   * claims: confirmed when their post was stored, given back when it never was. Alt text changes
   * stalled on their way to the post are returned to the caller, which owns the posts. Runs at most
   * every few seconds, whoever calls it more often.
   */
  async sweep(): Promise<{ stalledEdits: MediaDocument[] }> {
    const now = Date.now();
    if (now < this.nextSweepAt) return { stalledEdits: [] };
    this.nextSweepAt = now + Math.min(10_000, Math.max(250, this.options.orphanAfterMs / 4));
    const stalledUploads = await findStalled(this.media, { state: 'storing', at: { $lt: stalledSince(stalledUploadMs) } }, { limit: 50 });
    const orphans = await findStalled(this.media, { state: 'ready', at: { $lt: stalledSince(this.options.orphanAfterMs) }, post: { $exists: false } }, { limit: 50 });
    const gone = await findStalled(this.media, { state: 'gone', goneAt: { $lt: stalledSince(stalledGoneMs) } }, { limit: 50 });
    const claims = await findStalled(this.media, { claimedAt: { $lt: stalledSince(stalledClaimMs) } }, { limit: 50 });
    if (claims.length > 0) {
      const stored = await this.content.lookups.existing(claims.map((doc) => doc.post!));
      const [kept, lost] = partition(claims, (doc) => stored.has(doc.post!.toHexString()));
      if (kept.length > 0) await this.media.updateMany({ _id: { $in: kept.map((doc) => doc._id) } }, { $unset: { claimedAt: '' } });
      for (const doc of lost) await this.release([doc._id], doc.post!);
    }
    // An orphan is marked gone only if no post claimed it meanwhile.
    if (orphans.length > 0) {
      const ids = orphans.map((doc) => doc._id);
      await this.media.updateMany({ _id: { $in: ids }, state: 'ready', post: { $exists: false } }, { $set: { state: 'gone', goneAt: new Date() } });
      gone.push(...(await this.media.find({ _id: { $in: ids }, state: 'gone' }).toArray()));
    }
    await this.discard([...stalledUploads, ...gone]);
    const stalledEdits = await findStalled(this.media, { editedAt: { $lt: stalledSince(stalledEditMs) } }, { limit: 50 });
    return { stalledEdits };
  }

  /** Deletes the bytes, then the documents that named them: a crash in between is finished by a repeat. */
  private async discard(docs: readonly MediaDocument[]): Promise<void> {
    if (docs.length === 0) return;
    await this.bytes.remove(docs.flatMap((doc) => [doc.variants.full.file, doc.variants.preview.file]));
    await this.media.deleteMany({ _id: { $in: docs.map((doc) => doc._id) } });
  }
}

function partition<T>(items: readonly T[], test: (item: T) => boolean): [T[], T[]] {
  const yes: T[] = [];
  const no: T[] = [];
  for (const item of items) (test(item) ? yes : no).push(item);
  return [yes, no];
}

/** Alt text: at most `maxAltLength` characters, shown as text; blank is none. */
export function checkedAlt(alt: string | null | undefined): string | null {
  if (alt === null || alt === undefined) return null;
  const trimmed = alt.trim();
  if (trimmed === '') return null;
  if (trimmed.length > maxAltLength) throw badInput(`Alt text must be at most ${maxAltLength} characters`);
  assertDisplayableText(trimmed, 'Alt text', { multiline: true });
  return trimmed;
}
