import { createHash } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { encode } from 'blurhash';
import sharp, { type Sharp, type SharpOptions } from 'sharp';
import { AppError, badInput } from '../errors.js';
import type { VariantDocument } from '../records/media.js';

/** The formats accepted, as their first bytes say them (never a file name or a declared type). */
export type ImageFormat = 'jpeg' | 'png' | 'webp' | 'gif';

/** Longer side of the stored full-size image, and of its preview. */
export const fullSize = 2048;
export const previewSize = 400;

export function sniffFormat(head: Uint8Array): ImageFormat | null {
  const startsWith = (bytes: readonly number[], at = 0) => bytes.every((byte, index) => head[at + index] === byte);
  if (startsWith([0xff, 0xd8, 0xff])) return 'jpeg';
  if (startsWith([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return 'png';
  if (startsWith([0x47, 0x49, 0x46, 0x38]) && (head[4] === 0x37 || head[4] === 0x39) && head[5] === 0x61) return 'gif';
  // RIFF, a length, then WEBP.
  if (startsWith([0x52, 0x49, 0x46, 0x46]) && startsWith([0x57, 0x45, 0x42, 0x50], 8)) return 'webp';
  return null;
}

export interface EncodedImage extends Omit<VariantDocument, 'file'> {
  data: Buffer;
}

export interface ProcessedImage {
  format: ImageFormat;
  width: number;
  height: number;
  blurhash: string;
  full: EncodedImage;
  preview: EncodedImage;
}

export const unsupported = () =>
  new AppError('UNSUPPORTED_MEDIA_TYPE', 'Only JPEG, PNG, WebP and GIF images are accepted, recognised by their content; this file is none of them', {
    http: { status: 415 },
  });

/**
 * Images decoded at once in this process: one core's worth fewer than the machine has, at most
 * two. sharp (libvips) runs on libuv's thread pool, off the event loop, but decoding 12 megapixels
 * keeps a core busy for a good part of a second: bounded here, uploads queue in their own line, a
 * core stays free for the event loop (timeline reads keep their latency, measured by
 * `npm run bench:media`), and the pool that also hashes passwords is never filled by uploads.
 */
const processingSlots = Math.max(1, Math.min(2, availableParallelism() - 1));
let running = 0;
const waiting: (() => void)[] = [];

async function inSlot<T>(work: () => Promise<T>): Promise<T> {
  if (running >= processingSlots) await new Promise<void>((resolve) => waiting.push(resolve));
  running++;
  try {
    return await work();
  } finally {
    running--;
    waiting.shift()?.();
  }
}

// libvips's own threads per image: the thread pool already runs images side by side.
sharp.concurrency(1);
// Nothing is cached between uploads: each image is seen once.
sharp.cache(false);

/**
 * Checks, orients, strips and re-encodes one uploaded image: the format from its bytes, the pixel
 * count from its header before any pixel is decoded (a small PNG claiming 50,000 × 50,000 pixels is
 * refused in milliseconds), then decoded once, turned upright by its EXIF orientation, and written
 * again without any metadata (EXIF, GPS, XMP, IPTC, comments) at most `fullSize` and `previewSize`
 * pixels on the longer side, with a blurhash of the preview. A GIF gives its first frame.
 */
export function processImage(input: Buffer, limits: { maxPixels: number }): Promise<ProcessedImage> {
  if (input.length === 0) return Promise.reject(badInput('The file is empty'));
  const format = sniffFormat(input.subarray(0, 16));
  if (!format) return Promise.reject(unsupported());
  return inSlot(() => processKnown(input, format, limits.maxPixels));
}

async function processKnown(input: Buffer, format: ImageFormat, maxPixels: number): Promise<ProcessedImage> {
  // `pages: 1`: a GIF's (or animated WebP's) first frame only. The header is read, no pixel yet.
  const options: SharpOptions = { pages: 1, failOn: 'truncated', limitInputPixels: maxPixels };
  const header = await sharp(input, { ...options, limitInputPixels: false }).metadata().catch(() => {
    throw badInput('The file could not be read as an image: it is damaged or cut short');
  });
  // The decoder sharp picked must be the one the first bytes named (never SVG, PDF or TIFF behind them).
  if (header.format !== format) throw unsupported();
  const width = header.width ?? 0;
  const height = header.pageHeight ?? header.height ?? 0;
  if (width === 0 || height === 0) throw badInput('The image has no pixels');
  if (width * height > maxPixels) {
    throw new AppError(
      'PAYLOAD_TOO_LARGE',
      `The image is ${width} × ${height} pixels; at most ${(maxPixels / 1_000_000).toLocaleString('en')} megapixels are accepted`,
      { http: { status: 413 } },
    );
  }
  const alpha = header.hasAlpha === true;
  try {
    // Oriented first, so the stored size is the size people see; no `keepMetadata`: sharp writes none.
    const full = await encoded(sharp(input, options).autoOrient().resize(fullSize, fullSize, { fit: 'inside', withoutEnlargement: true }), alpha);
    const preview = await encoded(sharp(full.data).resize(previewSize, previewSize, { fit: 'inside', withoutEnlargement: true }), alpha);
    const small = await sharp(preview.data).resize(32, 32, { fit: 'inside' }).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
    const blurhash = encode(new Uint8ClampedArray(small.data), small.info.width, small.info.height, 4, 3);
    return { format, width: full.width, height: full.height, blurhash, full, preview };
  } catch (error) {
    if (error instanceof AppError) throw error;
    throw badInput('The image could not be decoded: it is damaged or cut short');
  }
}

/** JPEG for opaque images, PNG where transparency must survive. */
async function encoded(image: Sharp, alpha: boolean): Promise<EncodedImage> {
  const { data, info } = await (alpha ? image.png({ compressionLevel: 8 }) : image.jpeg({ quality: 85 })).toBuffer({ resolveWithObject: true });
  return {
    data,
    type: alpha ? 'image/png' : 'image/jpeg',
    bytes: data.length,
    width: info.width,
    height: info.height,
    etag: createHash('sha256').update(data).digest('base64url'),
  };
}
