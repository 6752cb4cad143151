import { ObjectId } from 'mongodb';
import { describe, expect, it } from 'vitest';
import { changed, counted, followChange, postAdded, postEdited, postRemoved, type ChangeEvent } from '../../src/changes/events.js';
import { forgetStale, type HeldRecords } from '../../src/changes/staleness.js';
import type { PostRecord } from '../../src/records/posts.js';
import { publicPost } from '../support/records.js';

// What each change makes stale, said in one place: every kind of change, and only what it touches.

function recorder(): { held: HeldRecords; forgotten: string[] } {
  const forgotten: string[] = [];
  const held: HeldRecords = {
    forgetOutboxes: (authorIds) => forgotten.push(`outboxes ${authorIds.join(',')}`),
    forgetPosts: (postIds) => forgotten.push(`posts ${postIds.map((id) => id.toHexString()).join(',')}`),
    postEdited: (edited, repostIds) => forgotten.push(`edited in place ${[edited.id, ...repostIds].map((id) => id.toHexString()).join(',')}: ${edited.body.text}`),
    forgetUsers: ({ users, following }) => forgotten.push(`users ${users.join(',')} following ${following.join(',')}`),
    applyCounts: (counts) => forgotten.push(`counts ${counts.map(({ handle, followerCount, version }) => `${handle}:${followerCount}@${version}`).join(',')}`),
    forgetFilters: (readerIds) => forgotten.push(`filters ${readerIds === 'all' ? 'all' : readerIds.join(',')}`),
    forgetTimelines: (userIds, edits) => forgotten.push(`timelines ${userIds.join(',')}${edits?.delivered ? ' (taking the delivery in place)' : ''}`),
    forgetLists: (ownerIds) => forgotten.push(`lists ${ownerIds.join(',')}`),
    postCounted: (postId, counts) => forgotten.push(`post counts ${postId.toHexString()}${counts ? ` ${counts.likes}@${counts.version}` : ''}`),
    forgetViewerState: (viewerId, state, postId) => forgotten.push(`${state} of ${viewerId} ${postId.toHexString()}`),
  };
  return { held, forgotten };
}

const post = (overrides: Partial<PostRecord> = {}): PostRecord =>
  publicPost({
    id: new ObjectId('000000000000000000000001'),
    authorId: 'ann',
    text: 'hello',
    createdAt: new Date(0),
    ...overrides,
  });

const forgottenBy = (event: ChangeEvent) => {
  const { held, forgotten } = recorder();
  forgetStale(event, held);
  return forgotten;
};

describe('forgetStale', () => {
  it('takes a new post into its author\'s outbox, which their own timeline merges, and leaves every timeline held as it is', () => {
    expect(forgottenBy(postAdded(post()))).toEqual(['outboxes ann']);
    expect(forgottenBy(postAdded(post({ pulled: true })))).toEqual(['outboxes ann']);
  });

  it('drops the post and its author\'s outbox and own timeline for a removed post; for a repost, the original\'s id', () => {
    expect(forgottenBy(postRemoved(post()))).toEqual(['posts 000000000000000000000001', 'outboxes ann', 'timelines ann']);
    const original = { id: new ObjectId('000000000000000000000002'), authorId: 'bob', createdAt: new Date(0), replyTo: null };
    expect(forgottenBy(postRemoved(post({ repostOf: original })))).toEqual(['posts 000000000000000000000002', 'outboxes ann', 'timelines ann']);
  });

  it('takes an edited text in place in the post and its reposts, and drops them after an alt text change; outboxes go either way', () => {
    const repost = { id: new ObjectId('000000000000000000000005'), authorId: 'bob' };
    const edited = publicPost({ id: new ObjectId('000000000000000000000001'), authorId: 'ann', text: 'hello, edited', createdAt: new Date(0) });
    expect(forgottenBy(postEdited(edited, [repost], [], edited))).toEqual(['edited in place 000000000000000000000001,000000000000000000000005: hello, edited', 'outboxes ann,bob']);
    expect(forgottenBy(postEdited(edited, [repost]))).toEqual(['posts 000000000000000000000001,000000000000000000000005', 'outboxes ann,bob']);
  });
  it('drops both users, the follower\'s list and the follower\'s timeline for a follow or an unfollow', () => {
    for (const following of [true, false]) {
      expect(forgottenBy(followChange(following, 'ann', 'bob'))).toEqual(['users ann,bob following ann', 'timelines ann']);
    }
  });

  it('updates the users a follow carries the counts of in place, and drops only the others', () => {
    const counts = (handle: string, followerCount: number) => ({ handle, followerCount, followingCount: 1, version: 7, followingVersion: 1 });
    expect(forgottenBy(followChange(true, 'ann', 'bob', [counts('ann', 3), counts('bob', 9)]))).toEqual(['counts ann:3@7,bob:9@7', 'users  following ann', 'timelines ann']);
    expect(forgottenBy(followChange(false, 'ann', 'bob', [counts('bob', 8)]))).toEqual(['counts bob:8@7', 'users ann following ann', 'timelines ann']);
  });

  it('forgets a public reply\'s parent\'s counts when the reply comes and when it goes', () => {
    const parent = { id: new ObjectId('000000000000000000000009'), authorId: 'bob' };
    expect(forgottenBy(postAdded(post({ replyTo: parent })))).toEqual(['post counts 000000000000000000000009', 'outboxes ann']);
    expect(forgottenBy(postRemoved(post({ replyTo: parent })))).toEqual(['post counts 000000000000000000000009', 'posts 000000000000000000000001', 'outboxes ann', 'timelines ann']);
  });

  it('takes a like\'s counts in place and forgets the liker\'s state of the post', () => {
    const postId = new ObjectId('000000000000000000000003');
    expect(forgottenBy(counted(postId, { likes: 4, reposts: 0, replies: 0, quotes: 0, version: 12 }, { id: 'cat', state: 'like' }))).toEqual([
      'post counts 000000000000000000000003 4@12',
      'like of cat 000000000000000000000003',
    ]);
    expect(forgottenBy(counted(postId, null, { id: 'cat', state: 'bookmark' }))).toEqual(['bookmark of cat 000000000000000000000003']);
    expect(forgottenBy(counted(postId, 'stale', { id: 'cat', state: 'repost' }))).toEqual(['post counts 000000000000000000000003', 'repost of cat 000000000000000000000003']);
  });

  it('drops what a change names, and every filter when it says so', () => {
    expect(forgottenBy(changed({ users: ['ann'], filters: ['bob'], timelines: ['cat'], lists: ['dan'] }))).toEqual([
      'users ann following ',
      'filters bob',
      'timelines cat',
      'lists dan',
    ]);
    expect(forgottenBy(changed({ allFilters: true }))).toEqual(['users  following ', 'filters all', 'timelines ', 'lists ']);
  });
});
