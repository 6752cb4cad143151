import { ObjectId } from 'mongodb';
import { postEdited, type ChangePublisher } from '../changes/events.js';
import type { ContentService } from '../content/contentService.js';
import { postText } from '../content/text.js';
import { AppError, notFound } from '../errors.js';
import type { MediaService } from '../media/mediaService.js';
import { mentionedHandles } from '../records/mentions.js';
import type { MediaDocument } from '../records/media.js';
import { parsePostId, type PostRecord } from '../records/posts.js';
import type { TaskDocument } from '../queue/taskQueue.js';
import type { Fanout } from './fanout.js';
import type { PostVisibility } from './postVisibility.js';
import type { EditPayload, QueuedTask, TaskHandlers } from './queuedWork.js';
import { noRequest, type Scope } from '../observability/requestScope.js';

/**
 * How long an edit's safety net waits before it carries the edit itself: far beyond the request
 * that edits, which takes it back once it has carried the edit (see `editText`).
 */
const safetyNetMs = 30_000;

/**
 * Changes to a post once it is published that every copy of it must take: its text (an edit by
 * its author) and an image's alt text. The post and its reposts in `content` first, then every
 * instance is told to forget what it holds of them (`postEdited`, which also reaches the
 * `timelinePostEdited` subscribers), then the timelines that embed them are rewritten through the
 * queue. A text edit queues a safety net before it writes, and an alt text change stays marked
 * under way on the image (`editedAt`): either way a request that dies half-way is finished later.
 */
export class PostEdits {
  constructor(
    private readonly deps: {
      media: Pick<MediaService, 'setAlt' | 'edited' | 'sweep'>;
      content: ContentService;
      fanout: Pick<Fanout, 'enqueueRewrites' | 'enqueueLater' | 'cancel'>;
      changes: ChangePublisher;
      visibility: Pick<PostVisibility, 'canSee'>;
    },
  ) {}

  readonly handlers: Pick<TaskHandlers, 'edit-copies'> = {
    'edit-copies': (task) => this.carryAgain(task),
  };

  /**
   * Replaces the text of one of the viewer's posts (the text rules of a new post apply): only the
   * text changes, and the text it had goes into the post's history. Unknown or invisible:
   * NOT_FOUND; someone else's: FORBIDDEN.
   */
  async editText(viewerId: string, id: string, text: string, scope: Scope): Promise<PostRecord> {
    const { content, fanout, visibility } = this.deps;
    const postId = parsePostId(id);
    const missing = () => notFound(`No post with id "${id}"`);
    if (!postId) throw missing();
    // The text rules first, costing nothing; an empty text only passes beside images, seen below.
    const message = postText(text, { mayBeEmpty: true });
    const safetyNet: QueuedTask = { _id: `edit-copies:${id}:${new ObjectId().toHexString()}`, kind: 'edit-copies', payload: { postId }, runAt: new Date(Date.now() + safetyNetMs) };
    let replaced = '';
    let queued = false;
    // Checked on the post as each attempt read it; the safety net is queued before the first write.
    const edited = await content.textEdits.edit(postId, message, async (post, first) => {
      if (first) {
        if (!(await visibility.canSee(viewerId, [post]))[0]) throw missing();
        if (post.authorId !== viewerId) throw new AppError('FORBIDDEN', 'Only the author can edit a post');
        if (message === '' && post.body.media.length === 0) postText(message);
        await fanout.enqueueLater(safetyNet, scope);
        queued = true;
      }
      replaced = post.body.text;
    });
    if (!edited) {
      if (queued) await fanout.cancel(safetyNet._id);
      throw missing();
    }
    await this.carryText(edited.post, edited.version, replaced, scope);
    await fanout.cancel(safetyNet._id);
    return edited.post;
  }

  /** What a request that died after its edit left: carried again from the post as it is now. */
  private async carryAgain(task: TaskDocument<EditPayload>): Promise<void> {
    const current = await this.deps.content.textEdits.current(task.payload.postId);
    if (current && current.version > 0) await this.carryText(current.post, current.version, current.replaced, noRequest);
  }

  /**
   * An edited text into the reposts' copies, every instance's held copies, the embedded timeline
   * entries (queued), and the notifications of whom the text mentions now and no longer does.
   */
  private async carryText(post: PostRecord, version: number, replaced: string | null, scope: Scope): Promise<void> {
    const { content, changes, fanout } = this.deps;
    const reposts = await content.scans.allRepostsOf(post.id);
    await content.textEdits.copyInto(post, version, reposts.map((repost) => repost.id));
    await changes.publish(postEdited(ref(post), reposts.map(ref), audienceOf(post), post));
    const before = replaced === null || !replaced.includes('@') ? [] : mentionedHandles(replaced);
    const dropped = before.filter((handle) => !post.body.mentions.includes(handle));
    const added = post.body.mentions.some((handle) => !before.includes(handle));
    const notify: QueuedTask[] =
      dropped.length > 0 || added ? [{ _id: `notify-post:${post.id.toHexString()}@${version}`, kind: 'notify-post', payload: { postId: post.id, ...(dropped.length > 0 ? { dropped } : {}) } }] : [];
    const copies = [post, ...reposts.map((repost) => ({ ...repost, body: post.body }))];
    await fanout.enqueueRewrites(copies.filter((copy) => copy.body.visibility === 'PUBLIC' && !copy.pulled), post.body.editedAt!, scope, notify);
  }

  /** Sets an image's alt text, its uploader only, and carries it into every copy of its post. */
  async setAlt(viewerId: string, mediaId: string, alt: string | null | undefined, scope: Scope): Promise<MediaDocument> {
    const doc = await this.deps.media.setAlt(viewerId, mediaId, alt);
    if (doc.post && doc.editedAt) await this.carry(doc._id, doc.post, doc.alt, doc.editedAt, scope);
    return doc;
  }

  /** The media sweep, and the alt text changes it finds stalled carried again. */
  async repairStalled(): Promise<number> {
    const { stalledEdits } = await this.deps.media.sweep();
    for (const doc of stalledEdits) if (doc.post && doc.editedAt) await this.carry(doc._id, doc.post, doc.alt, doc.editedAt, noRequest);
    return stalledEdits.length;
  }

  private async carry(mediaId: ObjectId, postId: ObjectId, alt: string | null, editedAt: Date, scope: Scope): Promise<void> {
    const { content, changes, fanout, media } = this.deps;
    const post = await content.lookups.getEntry(postId);
    if (post) {
      const reposts = await content.scans.allRepostsOf(postId);
      await content.setMediaAlt([postId, ...reposts.map((repost) => repost.id)], mediaId, alt);
      await changes.publish(postEdited(ref(post), reposts.map(ref), audienceOf(post)));
      // Read again: the rewrite tasks carry the body as it is now, though each reads it again when it runs.
      const withAlt = (record: typeof post) => ({
        ...record,
        body: { ...record.body, media: record.body.media.map((image) => (image.id.equals(mediaId) ? { ...image, alt } : image)) },
      });
      await fanout.enqueueRewrites([post, ...reposts].filter((copy) => copy.body.visibility === 'PUBLIC' && !copy.pulled).map(withAlt), editedAt, scope);
    }
    await media.edited(mediaId, editedAt);
  }
}

const ref = ({ id, authorId }: { id: ObjectId; authorId: string }) => ({ id, authorId });

/** Whom a mentioned-only post is addressed to: their live subscriptions hear of its edits. */
const audienceOf = (post: PostRecord): readonly string[] => (post.body.visibility === 'MENTIONED' ? post.body.audience : []);
