import { ObjectId } from 'mongodb';
import { listGlobalId, mediaGlobalId, parseGlobalId, postGlobalId } from '../../src/api/globalIds.js';

/**
 * The database id behind a post's, list's or keyword filter's API id, for tests that look at the
 * stored documents; and the API id of a stored post or list, for tests that made it below the API.
 */
export function internalId(id: string): ObjectId {
  const parsed = parseGlobalId(id);
  if (parsed?.type === 'Post') return parsed.postId;
  if (parsed?.type === 'List') return parsed.listId;
  if (parsed?.type === 'KeywordFilter') return parsed.filterId;
  if (parsed?.type === 'Media') return parsed.mediaId;
  throw new Error(`${id} is not the id of a post, list, keyword filter or upload`);
}

/** The hex database id behind an API id, as documents and services name it. */
export const internalHex = (id: string): string => internalId(id).toHexString();

export const apiPostId = (id: ObjectId | string): string => postGlobalId(typeof id === 'string' ? new ObjectId(id) : id);
export const apiMediaId = (id: ObjectId | string): string => mediaGlobalId(typeof id === 'string' ? new ObjectId(id) : id);
export const apiListId = (id: ObjectId | string): string => listGlobalId(typeof id === 'string' ? new ObjectId(id) : id);
