/**
 * Images attached to posts, as every layer sees them: the descriptor a post's body carries (what a
 * page needs to show an image, never its bytes), the `media` collection's document, and their
 * stored forms. Types and pure functions only.
 */
import { ObjectId } from 'mongodb';

/** At most this many images go with one post. */
export const maxMediaPerPost = 4;
/** Alt text, in UTF-16 code units (the length a browser's `maxlength` counts). */
export const maxAltLength = 1500;

export type MediaKind = 'IMAGE';

/** The sizes an upload is stored in: the full image (at most 2,048 px) and its preview (at most 400 px). */
export const mediaVariants = ['full', 'preview'] as const;
export type MediaVariant = (typeof mediaVariants)[number];

/** What a post's body holds of one image: enough for a page to show it without reading `media`. */
export interface MediaDescriptor {
  id: ObjectId;
  kind: MediaKind;
  alt: string | null;
  /** Of the stored full-size image, orientation applied. */
  width: number;
  height: number;
  blurhash: string;
}

/** A descriptor as a post's document (and embedded entries, events, tasks) stores it. */
export interface StoredMedia {
  _id: ObjectId;
  /** Alt text; absent when none was given. An image is the one kind there is, so no kind is stored. */
  a?: string;
  w: number;
  h: number;
  b: string;
}

export const toStoredMedia = (media: MediaDescriptor): StoredMedia => ({
  _id: media.id,
  ...(media.alt === null ? {} : { a: media.alt }),
  w: media.width,
  h: media.height,
  b: media.blurhash,
});

export const fromStoredMedia = (stored: StoredMedia): MediaDescriptor => ({
  id: stored._id,
  kind: 'IMAGE',
  alt: stored.a ?? null,
  width: stored.w,
  height: stored.h,
  blurhash: stored.b,
});

/** One stored size of an image: its GridFS file and what serving it needs to say. */
export interface VariantDocument {
  /** The GridFS file (`media_bytes.files`), chosen before its bytes are written. */
  file: ObjectId;
  type: 'image/jpeg' | 'image/png';
  bytes: number;
  width: number;
  height: number;
  /** A strong validator of the bytes: their SHA-256, base64url. */
  etag: string;
}

/**
 * `storing`: written before any byte, with the files it will write, so a crash leaves a record of
 * what to delete (the sweep does); `ready`: every byte stored, shown to its owner and attachable;
 * `gone`: its post or its owner's account was deleted, or it was never attached in time: no URL
 * answers, and its bytes and this document are being deleted.
 */
export type MediaState = 'storing' | 'ready' | 'gone';

/** The `media` collection: one document per upload. */
export interface MediaDocument {
  _id: ObjectId;
  /** The uploader's handle. */
  owner: string;
  state: MediaState;
  /** When its bytes began to be stored, after processing (for the sweep of stalled and orphaned uploads). */
  at: Date;
  /** The post it is attached to; absent until attached. */
  post?: ObjectId;
  /** Set by the claim for `post` until the sweep has seen the post stored, or gives the image back (see MediaService.claim). */
  claimedAt?: Date;
  /** Set while a change of `alt` is on its way into the post's copies (see PostEdits). */
  editedAt?: Date;
  /** When it was marked `gone`. */
  goneAt?: Date;
  alt: string | null;
  width: number;
  height: number;
  blurhash: string;
  /** The uploaded bytes' length (what counted against MEDIA_MAX_BYTES). */
  size: number;
  variants: { full: VariantDocument; preview: VariantDocument };
}

export const toDescriptor = (doc: Pick<MediaDocument, '_id' | 'alt' | 'width' | 'height' | 'blurhash'>): MediaDescriptor => ({
  id: doc._id,
  kind: 'IMAGE',
  alt: doc.alt,
  width: doc.width,
  height: doc.height,
  blurhash: doc.blurhash,
});

/** Parses a client-supplied media id; a malformed id names no upload. */
export function parseMediaId(id: string): ObjectId | null {
  return /^[0-9a-f]{24}$/i.test(id) ? new ObjectId(id) : null;
}

/** A descriptor with the URLs one viewer may use, as the API answers it. */
export interface MediaRecord extends MediaDescriptor {
  url: string;
  previewUrl: string;
}
