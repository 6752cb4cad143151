import { createHash } from 'node:crypto';
import { ObjectId } from 'mongodb';
import { badInput, notFound } from '../errors.js';
import type { KeywordFilterRecord } from '../graph/readerView.js';
import type { NotificationRecord } from '../records/notifications.js';
import { handlePattern, type UserRecord } from '../records/users.js';

/**
 * The ids clients see (`Node.id`), and the only place that knows how they are made: base64url of a
 * type tag and the internal key. Everything below the API keeps its own keys (handles, ObjectIds,
 * notification ids); resolvers turn them into global ids on the way out and back on the way in.
 * A change of what a key holds (a post id carrying its author, say) is a change of this file.
 *
 * Every tag is an upper-case letter, so every global id starts with an upper-case letter
 * (S to V): never a handle (lower case) nor a database id (lower-case hex), which is how the forms
 * the API handed out before are told from a malformed id.
 */
export type NodeType = 'User' | 'Post' | 'List' | 'Notification' | 'KeywordFilter' | 'Media' | 'Report';

const tags = { User: 'U', Post: 'P', List: 'L', Notification: 'N', KeywordFilter: 'K', Media: 'M', Report: 'R' } as const satisfies Record<NodeType, string>;
const typeOfTag = new Map(Object.entries(tags).map(([type, tag]) => [tag as string, type as NodeType]));

/** What a global id names, by type: the internal keys, parsed. */
export type GlobalId =
  | { type: 'User'; handle: string; account: string | null }
  | { type: 'Post'; postId: ObjectId }
  | { type: 'List'; listId: ObjectId }
  | { type: 'Notification'; recipientId: string; notificationId: string }
  | { type: 'KeywordFilter'; filterId: ObjectId }
  | { type: 'Media'; mediaId: ObjectId }
  | { type: 'Report'; reportId: ObjectId };

const encode = (type: NodeType, ...parts: string[]) => Buffer.from([tags[type], ...parts].join(':')).toString('base64url');

/**
 * A user's id names the account, not only the handle: once an account is deleted its handle may be
 * taken again, and the new account must not share the old one's id (a normalised cache would merge
 * them). The account's identity is the token's subject, so the id carries a digest of it.
 */
const accountDigests = new Map<string, string>();
function accountDigest(accountId: string): string {
  let digest = accountDigests.get(accountId);
  if (digest === undefined) {
    digest = createHash('sha256').update(accountId).digest('base64url').slice(0, 12);
    // Bounded: a process sees few accounts per second, and a digest is cheap to make again.
    if (accountDigests.size >= 100_000) accountDigests.clear();
    accountDigests.set(accountId, digest);
  }
  return digest;
}

export const userGlobalId = (user: Pick<UserRecord, 'handle' | 'accountId'>) =>
  user.accountId ? encode('User', user.handle, accountDigest(user.accountId)) : encode('User', user.handle);
export const postGlobalId = (id: ObjectId) => encode('Post', id.toHexString());
export const listGlobalId = (id: ObjectId) => encode('List', id.toHexString());
export const notificationGlobalId = (notification: Pick<NotificationRecord, 'recipientId' | 'id'>) =>
  encode('Notification', notification.recipientId, notification.id);
export const keywordFilterGlobalId = (filter: Pick<KeywordFilterRecord, 'id'>) => encode('KeywordFilter', filter.id);
export const mediaGlobalId = (id: ObjectId) => encode('Media', id.toHexString());
export const reportGlobalId = (id: ObjectId) => encode('Report', id.toHexString());

/** Whether `user` is the account a global id of type User names. */
export const isAccountOf = (id: Extract<GlobalId, { type: 'User' }>, user: Pick<UserRecord, 'handle' | 'accountId'>) =>
  user.handle === id.handle && (id.account === null ? user.accountId === null : user.accountId !== null && accountDigest(user.accountId) === id.account);

const hexId = /^[0-9a-f]{24}$/;
const base64url = /^[A-Za-z0-9_-]{2,400}$/;

/** What an id names; null when it names nothing: malformed, or of no known type. */
export function parseGlobalId(id: string): GlobalId | null {
  if (!base64url.test(id)) return null;
  const text = Buffer.from(id, 'base64url').toString('utf8');
  // Only the id this module made decodes back to itself: no padding or trailing bits of another.
  if (Buffer.from(text).toString('base64url') !== id) return null;
  const [tag, ...parts] = text.split(':');
  switch (typeOfTag.get(tag ?? '')) {
    case 'User': {
      const [handle, account, ...rest] = parts;
      if (!handle || !handlePattern.test(handle) || rest.length > 0 || account === '') return null;
      return { type: 'User', handle, account: account ?? null };
    }
    case 'Post':
      return parts.length === 1 && hexId.test(parts[0]!) ? { type: 'Post', postId: new ObjectId(parts[0]) } : null;
    case 'List':
      return parts.length === 1 && hexId.test(parts[0]!) ? { type: 'List', listId: new ObjectId(parts[0]) } : null;
    case 'KeywordFilter':
      return parts.length === 1 && hexId.test(parts[0]!) ? { type: 'KeywordFilter', filterId: new ObjectId(parts[0]) } : null;
    case 'Media':
      return parts.length === 1 && hexId.test(parts[0]!) ? { type: 'Media', mediaId: new ObjectId(parts[0]) } : null;
    case 'Report':
      return parts.length === 1 && hexId.test(parts[0]!) ? { type: 'Report', reportId: new ObjectId(parts[0]) } : null;
    case 'Notification': {
      const [recipientId, ...rest] = parts;
      // A notification's own id holds colons of its own (`l:<post>`): the rest is all of it.
      if (!recipientId || !handlePattern.test(recipientId) || rest.length < 2) return null;
      return { type: 'Notification', recipientId, notificationId: rest.join(':') };
    }
    default:
      return null;
  }
}

/**
 * An id in a form the API handed out before ids were global: a handle (`User.id` was one), a
 * post's, list's or keyword filter's database id, a notification's own id. Told apart from a
 * malformed id so that a client still sending them learns what to change.
 */
export function isFormerId(id: string): boolean {
  return handlePattern.test(id) || hexId.test(id) || /^[flrym]:[0-9a-z_:-]+$/.test(id);
}

export const formerIdMessage = (id: string) =>
  `"${id}" is a handle or a database id, not an id: pass the \`id\` the API returned (handles go to the arguments named handle)`;

/**
 * What an id names when the API looks something up by it (`node`, `post(id:)`, `list(id:)`): null
 * when it names nothing, BAD_USER_INPUT for a former form.
 */
export function lookupId(id: string): GlobalId | null {
  const parsed = parseGlobalId(id);
  if (parsed === null && isFormerId(id)) throw badInput(formerIdMessage(id));
  return parsed;
}

/**
 * The key of a `type` an argument must name, for a mutation or subscription: NOT_FOUND for an id
 * that names nothing or something of another type, BAD_USER_INPUT for a former form.
 */
export function requireId<T extends NodeType>(id: string, type: T, what: string): Extract<GlobalId, { type: T }> {
  const parsed = lookupId(id);
  if (parsed === null || parsed.type !== type) throw notFound(`No ${what} with id "${id}"`);
  return parsed as Extract<GlobalId, { type: T }>;
}

/** The internal hex key of a post id argument (see `requireId`). */
export const postKey = (id: string): string => requireId(id, 'Post', 'post').postId.toHexString();
/** The internal hex key of an upload's id argument (see `requireId`). */
export const mediaKey = (id: string): string => requireId(id, 'Media', 'upload').mediaId.toHexString();
/** The internal hex key of a list id argument (see `requireId`). */
export const listKey = (id: string): string => requireId(id, 'List', 'list').listId.toHexString();
/** The key of a report id argument (see `requireId`). */
export const reportKey = (id: string): ObjectId => requireId(id, 'Report', 'report').reportId;

/** The type of a record `node` found, for the `Node` interface's type resolution. */
export function nodeTypeOf(record: object): NodeType {
  if ('reporterId' in record) return 'Report';
  if ('recipientId' in record) return 'Notification';
  if ('blurhash' in record) return 'Media';
  if ('authorId' in record) return 'Post';
  if ('ownerId' in record) return 'List';
  if ('followerCount' in record) return 'User';
  if ('phrase' in record) return 'KeywordFilter';
  throw new Error('A node of no known type');
}
