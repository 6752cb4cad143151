import { newBody, type PostRecord } from '../../src/records/posts.js';

/** A stored public post as the services pass it around: top level, pushed, counts read apart. */
export const publicPost = ({ text, ...fields }: Pick<PostRecord, 'id' | 'authorId' | 'createdAt'> & { text: string } & Partial<PostRecord>): PostRecord => ({
  pulled: false,
  replyTo: null,
  repostOf: null,
  counts: null,
  body: newBody(text),
  ...fields,
});
