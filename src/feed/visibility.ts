import { addressedTo, visibleTo, type PostRecord, type PostRef, type RepostOf } from '../records/posts.js';
import { compareNewestFirst } from '../content/position.js';
import type { ReaderView } from '../graph/readerView.js';
import type { TimelineEntry } from './timelineEntry.js';

/** Who is reading, whom they follow (themselves included), and what they hide. */
export interface Reader {
  id: string;
  follows: ReadonlySet<string>;
  view: ReaderView;
  /** The tags the reader follows, whose public posts join their home timeline; absent or empty elsewhere. */
  tags?: ReadonlySet<string>;
}

/**
 * Whether a post shows through a tag the reader follows: a public post (not a repost) with one of
 * their tags, whose author (and, for a reply, the author it answers) they do not hide. Tag posts
 * come from `content`, so their body is always there; a linked timeline entry has none, and came
 * through its author anyway.
 */
export function passesTags(entry: Pick<TimelineEntry, 'authorId' | 'replyTo' | 'repostOf' | 'body'>, reader: Reader): boolean {
  if (!reader.tags || reader.tags.size === 0 || !entry.body || entry.repostOf || entry.body.visibility !== 'PUBLIC') return false;
  if (!entry.body.tags.some((tag) => reader.tags!.has(tag))) return false;
  return !reader.view.hides(entry.authorId) && !(entry.replyTo && reader.view.hides(entry.replyTo.authorId));
}

/**
 * Originals and reposts of them, for deciding which occurrence of a reposted post a reader sees:
 * the originals still stored, and every repost of them by the given reposters.
 */
export type RepostLookup = (
  originalIds: readonly PostRecord['id'][],
  reposterIds: readonly string[],
) => Promise<{ originals: Set<string>; reposts: PostRecord[] }>;

/**
 * Everything that can be decided from the entry alone: a post addressed to the reader shows unless
 * they hide its author; otherwise its author (or reposter) is followed and not muted or blocked
 * either way, the reader may see it (a followee's mentioned-only post may be for others), a
 * reposted author is not hidden either, and a reply shows only to readers who follow both sides
 * (or are one of them).
 */
export function passesGraph(entry: Pick<TimelineEntry, 'authorId' | 'replyTo' | 'repostOf' | 'body'>, reader: Reader): boolean {
  if (reader.view.hides(entry.authorId)) return false;
  if (addressedTo(entry.body, reader.id)) return true;
  if (!reader.follows.has(entry.authorId)) return false;
  if (!visibleTo(entry.authorId, entry.body, reader.id, (authorId) => reader.follows.has(authorId))) return false;
  if (entry.repostOf) return !reader.view.hides(entry.repostOf.authorId);
  return replyShows(entry.authorId, entry.replyTo, reader);
}

function replyShows(authorId: string, replyTo: PostRef | null, reader: Reader): boolean {
  if (!replyTo || authorId === reader.id || replyTo.authorId === reader.id) return true;
  return reader.follows.has(replyTo.authorId) && !reader.view.hides(replyTo.authorId);
}

/** Whether the reader's timeline holds the original itself, so a repost of it would show it twice. */
function originalShows(original: RepostOf, reader: Reader): boolean {
  return reader.follows.has(original.authorId) && replyShows(original.authorId, original.replyTo, reader);
}

/**
 * Keeps the posts that survive keyword filters and, for reposts, only the first occurrence of
 * the original in this reader's timeline: none when the reader sees the original itself, else
 * the earliest repost by someone they follow and do not hide. Each decision depends on the entry
 * alone, never on the page it falls in, so no post shows twice however the timeline is paged, and
 * cursors stay valid. One `content` query for all the reposts of a batch.
 */
export async function firstOccurrences(posts: PostRecord[], reader: Reader, lookup: RepostLookup): Promise<PostRecord[]> {
  const unfiltered = posts.filter((post) => !reader.view.matchesKeyword(post.body.text));
  // A repost carries its original's body: an original shown through a followed tag is not shown twice.
  const reposts = unfiltered.filter(
    (post) => post.repostOf && !originalShows(post.repostOf, reader) && !passesTags({ ...post, repostOf: null, authorId: post.repostOf.authorId, replyTo: post.repostOf.replyTo }, reader),
  );
  if (reposts.length === 0) return unfiltered.filter((post) => !post.repostOf);

  const reposters = [...reader.follows].filter((handle) => !reader.view.hides(handle));
  const originalIds = new Map(reposts.map((post) => [post.repostOf!.id.toHexString(), post.repostOf!.id]));
  const { originals, reposts: known } = await lookup([...originalIds.values()], reposters);
  const earliest = new Map<string, PostRecord>();
  for (const repost of known) {
    const key = repost.repostOf!.id.toHexString();
    const current = earliest.get(key);
    if (!current || compareNewestFirst(repost, current) > 0) earliest.set(key, repost);
  }
  const shownReposts = new Set(
    reposts
      .filter((post) => originals.has(post.repostOf!.id.toHexString()))
      .filter((post) => earliest.get(post.repostOf!.id.toHexString())?.id.equals(post.id))
      .map((post) => post.id.toHexString()),
  );
  return unfiltered.filter((post) => !post.repostOf || shownReposts.has(post.id.toHexString()));
}
