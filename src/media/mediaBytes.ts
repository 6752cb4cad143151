import { Readable } from 'node:stream';
import { Binary, type Collection, type Db, type ObjectId } from 'mongodb';
import { plannedCollection, plannedIndexes } from '../db/shardPlan.js';

/** GridFS's bucket: `media_bytes.files` and `media_bytes.chunks`, beside the `media` collection. */
export const bucketName = 'media_bytes';

/** GridFS's default chunk size: 255 KiB. */
const chunkSize = 255 * 1024;

interface FileDocument {
  _id: ObjectId;
  length: number;
  chunkSize: number;
  uploadDate: Date;
  filename: string;
  metadata: Record<string, unknown>;
}

interface ChunkDocument {
  _id?: ObjectId;
  files_id: ObjectId;
  n: number;
  data: Binary;
}

/**
 * Chunks read per round trip while serving. A cursor with the server's default batch reads up to
 * 16 MB per reader: 50 readers of a large image would hold 800 MB. Four 255 KiB chunks per reader,
 * read again only as the client takes them, hold about 1 MB.
 */
const servingBatch = 4;

/** One file to store: its id, chosen before its first byte and recorded in its `media` document first. */
export interface FileToWrite {
  id: ObjectId;
  filename: string;
  data: Buffer;
  metadata: Record<string, unknown>;
}

/**
 * The bytes of every stored image, in GridFS's layout (files and chunks as the specification says
 * them, so `mongofiles` and every driver's bucket read them). Written here rather than through the
 * driver's upload stream: that stream asks the files collection for any document before its first
 * write (a command every shard would answer) and writes a file's chunks one insert each, where an
 * upload's two files go in one insert of chunks and one of files.
 */
export class MediaBytes {
  private readonly files: Collection<FileDocument>;
  private readonly chunks: Collection<ChunkDocument>;

  constructor(db: Db) {
    this.files = plannedCollection<FileDocument>(db, 'media_bytes.files');
    this.chunks = plannedCollection<ChunkDocument>(db, 'media_bytes.chunks');
  }

  async ensureIndexes(): Promise<void> {
    // GridFS's own indexes, the ones every driver's bucket expects.
    await Promise.all([
      plannedIndexes(this.chunks, [{ key: { files_id: 1, n: 1 }, unique: true, name: 'files_id_1_n_1' }]),
      plannedIndexes(this.files, [{ key: { filename: 1, uploadDate: 1 }, name: 'filename_1_uploadDate_1' }]),
    ]);
  }

  /**
   * Writes these files: every chunk first, then the file documents, so a file document always has
   * its bytes. A second write of the same ids fails on the chunks' unique index.
   */
  async write(files: readonly FileToWrite[]): Promise<void> {
    const chunks: ChunkDocument[] = [];
    for (const file of files) {
      for (let n = 0, start = 0; start < file.data.length; n++, start += chunkSize) {
        chunks.push({ files_id: file.id, n, data: new Binary(file.data.subarray(start, start + chunkSize)) });
      }
    }
    if (chunks.length > 0) await this.chunks.insertMany(chunks, { ordered: false });
    const uploadDate = new Date();
    await this.files.insertMany(
      files.map((file) => ({ _id: file.id, length: file.data.length, chunkSize, uploadDate, filename: file.filename, metadata: file.metadata })),
      { ordered: false },
    );
  }

  /**
   * The file's bytes as a stream that reads `servingBatch` chunks at a time, and the next ones only
   * when the client has taken these (backpressure); closing it closes the cursor.
   */
  read(fileId: ObjectId): Readable {
    const cursor = this.chunks.find({ files_id: fileId }, { projection: { data: 1, n: 1 } }).sort({ n: 1 }).batchSize(servingBatch);
    let expected = 0;
    return new Readable({
      async read() {
        try {
          const chunk = await cursor.next();
          if (!chunk) return void this.push(null);
          // A missing chunk would serve a corrupt image under a length that promised more.
          if (chunk.n !== expected++) throw new Error(`chunk ${expected - 1} of file ${fileId.toHexString()} is missing`);
          this.push(chunk.data.value());
        } catch (error) {
          this.destroy(error as Error);
        }
      },
      destroy(error, callback) {
        cursor.close().then(
          () => callback(error),
          () => callback(error),
        );
      },
    });
  }

  /** Deletes these files, their chunks first: a chunk without its file is never left behind. Repeatable. */
  async remove(fileIds: readonly ObjectId[]): Promise<void> {
    if (fileIds.length === 0) return;
    await this.chunks.deleteMany({ files_id: { $in: [...fileIds] } });
    await this.files.deleteMany({ _id: { $in: [...fileIds] } });
  }
}
