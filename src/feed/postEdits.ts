import type { ObjectId } from 'mongodb';
import { postEdited, type ChangePublisher } from '../changes/events.js';
import type { ContentService } from '../content/contentService.js';
import type { MediaService } from '../media/mediaService.js';
import type { MediaDocument } from '../records/media.js';
import type { Fanout } from './fanout.js';

/**
 * Changes to a post once it is published that every copy of it must take: today an image's alt
 * text. The post and its reposts in `content` first (one update), then every instance is told to
 * forget what it holds of them (`postEdited`), then the timelines that embed them are rewritten
 * through the queue; the change stays marked under way on the image (`editedAt`) until all three
 * are done, so the sweep finishes one whose request died.
 */
export class PostEdits {
  constructor(
    private readonly deps: {
      media: Pick<MediaService, 'setAlt' | 'edited' | 'sweep'>;
      content: ContentService;
      fanout: Pick<Fanout, 'enqueueRewrites'>;
      changes: ChangePublisher;
    },
  ) {}

  /** Sets an image's alt text, its uploader only, and carries it into every copy of its post. */
  async setAlt(viewerId: string, mediaId: string, alt: string | null | undefined): Promise<MediaDocument> {
    const doc = await this.deps.media.setAlt(viewerId, mediaId, alt);
    if (doc.post && doc.editedAt) await this.carry(doc._id, doc.post, doc.alt, doc.editedAt);
    return doc;
  }

  /** The media sweep, and the alt text changes it finds stalled carried again. */
  async repairStalled(): Promise<number> {
    const { stalledEdits } = await this.deps.media.sweep();
    for (const doc of stalledEdits) if (doc.post && doc.editedAt) await this.carry(doc._id, doc.post, doc.alt, doc.editedAt);
    return stalledEdits.length;
  }

  private async carry(mediaId: ObjectId, postId: ObjectId, alt: string | null, editedAt: Date): Promise<void> {
    const { content, changes, fanout, media } = this.deps;
    const post = await content.lookups.getEntry(postId);
    if (post) {
      const reposts = await content.scans.allRepostsOf(postId);
      await content.setMediaAlt([postId, ...reposts.map((repost) => repost.id)], mediaId, alt);
      const ref = ({ id, authorId }: { id: ObjectId; authorId: string }) => ({ id, authorId });
      await changes.publish(postEdited(ref(post), reposts.map(ref)));
      // Read again: the rewrite tasks carry the body as it is now, though each reads it again when it runs.
      const withAlt = (record: typeof post) => ({
        ...record,
        body: { ...record.body, media: record.body.media.map((image) => (image.id.equals(mediaId) ? { ...image, alt } : image)) },
      });
      await fanout.enqueueRewrites([post, ...reposts].filter((copy) => copy.body.visibility === 'PUBLIC' && !copy.pulled).map(withAlt), editedAt);
    }
    await media.edited(mediaId, editedAt);
  }
}
