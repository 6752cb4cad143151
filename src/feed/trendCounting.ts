import type { PostTagUse, TagTrends } from '../content/tagTrends.js';
import type { PostRecord } from '../records/posts.js';
import type { TaskDocument } from '../queue/taskQueue.js';
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

/**
 * Counts queued posts' tags: the posts of tasks claimed together in one count (TagTrends.countPosts,
 * three commands for the batch). A post counted once is never counted again, so a replayed task,
 * or a post whose request died after storing it (the task was queued first), counts it once.
 * A post deleted before its task runs still counts, as a deletion within the window would.
 */
export class TrendCounting {
  readonly handlers: Pick<TaskHandlers, 'count-tags'> = {
    'count-tags': (task) => this.trends.countPosts([tagUse(task)]),
  };

  readonly batchHandlers: Pick<BatchTaskHandlers, 'count-tags'> = {
    'count-tags': async (tasks) => {
      await this.trends.countPosts(tasks.map(tagUse));
      return [];
    },
  };

  constructor(private readonly trends: Pick<TagTrends, 'countPosts'>) {}
}
