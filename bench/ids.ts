import type { ObjectId } from 'mongodb';
import { parseGlobalId } from '../src/api/globalIds.js';

/** The stored id behind a post's API id, for benchmarks that look at the documents a post made. */
export function storedPostId(apiId: string): ObjectId {
  const parsed = parseGlobalId(apiId);
  if (parsed?.type !== 'Post') throw new Error(`${apiId} is not a post's id`);
  return parsed.postId;
}
