import type { ObjectId } from 'mongodb';
import type { PostTagUse, TagTrends } from '../content/tagTrends.js';
import type { PostRecord } from '../records/posts.js';
import type { TaskDocument } from '../queue/taskQueue.js';
import { RetryLater } from '../queue/taskWorkers.js';
import type { BatchTaskHandlers, QueuedTask, TagCountPayload, TaskHandlers } from './queuedWork.js';

/**
 * The task that counts a post's tags for trending: only an original public post with tags (a
 * count must not tell of posts a reader cannot see, and a repost is not a use). It is queued in the
 * same write as the post's delivery and notifications, before the post is stored, so a post is
 * counted however its request ends, and its request pays nothing more where it queues work anyway.
 */
export function tagCountTasks(post: PostRecord): QueuedTask[] {
  if (post.repostOf || post.body.visibility !== 'PUBLIC' || post.body.tags.length === 0) return [];
  const payload: TagCountPayload = { postId: post.id, authorId: post.authorId, tags: [...post.body.tags], at: post.createdAt };
  return [{ _id: `count-tags:${post.id.toHexString()}`, kind: 'count-tags', payload }];
}

const tagUse = ({ payload }: TaskDocument<TagCountPayload>): PostTagUse => ({
  postId: payload.postId.toHexString(),
  authorId: payload.authorId,
  tags: payload.tags,
  at: payload.at,
});

/** A post still missing this long after its count was queued was never stored (its request failed or died). */
const unstoredGraceMs = 60_000;

/**
 * Counts queued posts' tags: the stored posts of tasks claimed together in one count
 * (TagTrends.countPosts: with the check that they are stored, four commands for the batch). A post
 * counted once is never counted again, so a replayed task counts nothing twice. Only stored posts
 * count: a post whose request failed before storing it (its task was queued first) is left to run
 * alone, waits for its request, then is dropped; a client's retry of that post is counted as the
 * one post it is. A post deleted before its task runs is not counted either, and dropped at once
 * (its deletion leaves a tombstone); one deleted after still counts, as counts are never taken back.
 */
export class TrendCounting {
  readonly handlers: Pick<TaskHandlers, 'count-tags'> = {
    'count-tags': async (task) => {
      const { postId } = task.payload;
      if (!(await this.deps.stored([postId])).has(postId.toHexString())) {
        // Deleted already: never counted, and nothing to wait for.
        if (await this.deps.wasDeleted(postId)) return;
        if (Date.now() - task.createdAt.getTime() < unstoredGraceMs) throw new RetryLater(1000, 'the post is not stored yet');
        return;
      }
      await this.deps.trends.countPosts([tagUse(task)]);
    },
  };

  readonly batchHandlers: Pick<BatchTaskHandlers, 'count-tags'> = {
    'count-tags': async (tasks) => {
      const stored = await this.deps.stored(tasks.map((task) => task.payload.postId));
      const [found, missing] = [tasks.filter((task) => stored.has(task.payload.postId.toHexString())), tasks.filter((task) => !stored.has(task.payload.postId.toHexString()))];
      await this.deps.trends.countPosts(found.map(tagUse));
      return missing;
    },
  };

  constructor(
    private readonly deps: {
      trends: Pick<TagTrends, 'countPosts'>;
      stored: (postIds: readonly ObjectId[]) => Promise<Set<string>>;
      wasDeleted: (postId: ObjectId) => Promise<boolean>;
    },
  ) {}
}
