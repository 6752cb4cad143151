import { deflateSync } from 'node:zlib';
import sharp from 'sharp';

/** A photo-like JPEG (noise, so it compresses like one) of this size. */
export async function jpeg(width = 300, height = 200, quality = 90): Promise<Buffer> {
  const pixels = Buffer.alloc(width * height * 3);
  for (let i = 0; i < pixels.length; i++) pixels[i] = (i * 7919 + ((i / 3) | 0) % width) & 0xff;
  return sharp(pixels, { raw: { width, height, channels: 3 } }).jpeg({ quality }).toBuffer();
}

export const png = (width = 120, height = 80, alpha = false) =>
  sharp({ create: { width, height, channels: alpha ? 4 : 3, background: { r: 20, g: 120, b: 200, alpha: alpha ? 0.5 : 1 } } }).png().toBuffer();
export const webp = (width = 120, height = 80) => sharp({ create: { width, height, channels: 3, background: '#336699' } }).webp().toBuffer();
export const gif = (width = 120, height = 80) => sharp({ create: { width, height, channels: 3, background: '#993366' } }).gif().toBuffer();

/** Where the photo in `withGpsExif` says it was taken: 48° 51' 24" N, 2° 21' 0" E. */
export const gpsLatitude = [48, 51, 24] as const;

/**
 * A JPEG as a phone writes one: an EXIF block with Orientation 6 (turn 90° clockwise to show) and
 * a GPS position, an XMP block and a comment, in front of `image`'s pixels (300 × 200 stored, so
 * 200 × 300 upright).
 */
export async function withGpsExif(image?: Buffer): Promise<Buffer> {
  const base = image ?? (await jpeg(300, 200));
  const tiff = Buffer.alloc(140);
  tiff.write('II', 0, 'latin1');
  tiff.writeUInt16LE(42, 2);
  tiff.writeUInt32LE(8, 4);
  // IFD0: Orientation, and the offset of the GPS IFD.
  tiff.writeUInt16LE(2, 8);
  entry(tiff, 10, 0x0112, 3, 1, 6);
  entry(tiff, 22, 0x8825, 4, 1, 38);
  tiff.writeUInt32LE(0, 34);
  // GPS IFD at 38: latitude and longitude, their values at 92 and 116.
  tiff.writeUInt16LE(4, 38);
  entry(tiff, 40, 0x0001, 2, 2, 0);
  tiff.write('N\0', 48, 'latin1');
  entry(tiff, 52, 0x0002, 5, 3, 92);
  entry(tiff, 64, 0x0003, 2, 2, 0);
  tiff.write('E\0', 72, 'latin1');
  entry(tiff, 76, 0x0004, 5, 3, 116);
  tiff.writeUInt32LE(0, 88);
  [...gpsLatitude, 2, 21, 0].forEach((value, index) => {
    tiff.writeUInt32LE(value, 92 + index * 8);
    tiff.writeUInt32LE(1, 96 + index * 8);
  });
  const exif = segment(0xe1, Buffer.concat([Buffer.from('Exif\0\0', 'latin1'), tiff]));
  const xmp = segment(0xe1, Buffer.from('http://ns.adobe.com/xap/1.0/\0<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF><rdf:Description exif:GPSLatitude="48,51.4N"/></rdf:RDF></x:xmpmeta>', 'latin1'));
  const comment = segment(0xfe, Buffer.from('taken at home, 12 Rue Example', 'latin1'));
  return Buffer.concat([base.subarray(0, 2), exif, xmp, comment, base.subarray(2)]);
}

function entry(tiff: Buffer, at: number, tag: number, type: number, count: number, value: number): void {
  tiff.writeUInt16LE(tag, at);
  tiff.writeUInt16LE(type, at + 2);
  tiff.writeUInt32LE(count, at + 4);
  if (type === 3) tiff.writeUInt16LE(value, at + 8);
  else tiff.writeUInt32LE(value, at + 8);
}

function segment(marker: number, body: Buffer): Buffer {
  const head = Buffer.alloc(4);
  head.writeUInt8(0xff, 0);
  head.writeUInt8(marker, 1);
  head.writeUInt16BE(body.length + 2, 2);
  return Buffer.concat([head, body]);
}

/**
 * A decompression bomb: a PNG of a few hundred bytes whose header claims `width` × `height`
 * pixels, with a little compressed data of a row of zeros.
 */
export function pngBomb(width = 50_000, height = 50_000): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.writeUInt8(8, 8); // bit depth
  ihdr.writeUInt8(2, 9); // RGB
  const idat = deflateSync(Buffer.alloc(width * 3 + 1));
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', ihdr), chunk('IDAT', idat), chunk('IEND', Buffer.alloc(0))]);
}

function chunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length, 0);
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body), 0);
  return Buffer.concat([length, body, crc]);
}

const crcTable = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(data: Buffer): number {
  let crc = 0xffffffff;
  for (const byte of data) crc = crcTable[(crc ^ byte) & 0xff]! ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}
