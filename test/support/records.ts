import type { PostRecord } from '../../src/records/posts.js';

/** A stored public post as the services pass it around: top level, pushed, counts read apart. */
export const publicPost = (fields: Pick<PostRecord, 'id' | 'authorId' | 'text' | 'createdAt'> & Partial<PostRecord>): PostRecord => ({
  pulled: false,
  replyTo: null,
  repostOf: null,
  counts: null,
  visibility: 'PUBLIC',
  audience: [],
  ...fields,
});
