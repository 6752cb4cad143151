import { describe, expect, it } from 'vitest';
import { seededRandom } from '../../bench/generate.js';
import { percentile, sampler, summarizeLags } from '../../bench/lag.js';
import { FollowTracker, namedMix } from '../../bench/traffic.js';

describe('named traffic mixes', () => {
  it("gives Socialite's model as 80 % reads, 10 % posts, 5 % follows, 5 % unfollows and nothing else", () => {
    const { name, mix } = namedMix('socialite');
    expect(name).toBe('socialite');
    expect(mix).toEqual({ read: 0.8, scroll: 0, readOwn: 0, post: 0.1, like: 0, follow: 0.05, unfollow: 0.05 });
  });

  it('gives reads as timeline reads only, and refuses names it does not know', () => {
    expect(namedMix(' reads ').mix).toMatchObject({ read: 1, post: 0, follow: 0, unfollow: 0 });
    expect(() => namedMix('toString')).toThrow(/one of reads, socialite/);
    expect(() => namedMix('writes')).toThrow(/got "writes"/);
  });
});

describe('the follow tracker', () => {
  const users = ['a', 'b', 'c', 'd'];

  it('follows only accounts not followed, unfollows only accounts followed, and never the user itself', () => {
    const tracker = new FollowTracker(users, [['a', 'b']]);
    const random = seededRandom(3);
    const followed = [tracker.pickToFollow('a', random), tracker.pickToFollow('a', random)];
    expect(followed.sort()).toEqual(['c', 'd']);
    expect(tracker.pickToFollow('a', random)).toBeNull(); // follows everyone else now
    expect(tracker.count('a')).toBe(3);
    const unfollowed = [tracker.pickToUnfollow('a', random), tracker.pickToUnfollow('a', random), tracker.pickToUnfollow('a', random)];
    expect(unfollowed.sort()).toEqual(['b', 'c', 'd']);
    expect(tracker.pickToUnfollow('a', random)).toBeNull();
  });

  it('reserves a pick before its request, so two sessions of one user never pick the same account, and undoes failed ones', () => {
    const tracker = new FollowTracker(users, [['b', 'a']]);
    const random = seededRandom(5);
    const first = tracker.pickToFollow('b', random)!;
    const second = tracker.pickToFollow('b', random)!;
    expect(first).not.toBe(second);
    tracker.undo('follow', 'b', first); // its request failed
    expect(tracker.follows('b', first)).toBe(false);
    expect(tracker.follows('b', second)).toBe(true);

    const gone = tracker.pickToUnfollow('b', random)!;
    expect(tracker.follows('b', gone)).toBe(false);
    tracker.undo('unfollow', 'b', gone);
    expect(tracker.follows('b', gone)).toBe(true);
  });
});

describe('delivery lag figures', () => {
  it('takes percentiles by nearest rank', () => {
    const values = Array.from({ length: 100 }, (_, i) => 100 - i); // 100 … 1, unsorted
    expect(percentile(values, 50)).toBe(50);
    expect(percentile(values, 99)).toBe(99);
    expect(percentile(values, 100)).toBe(100);
    expect(percentile([7], 99)).toBe(7);
    expect(percentile([3, 1, 2], 50)).toBe(2);
    expect(percentile([], 50)).toBeNaN();
  });

  it('summarizes delivered posts only, and averages recipients over the posts that had any', () => {
    const summary = summarizeLags([40, 10, 30, 20], { samples: 7, noAudience: 2, timedOut: 1, recipients: 25 });
    expect(summary).toMatchObject({ samples: 7, noAudience: 2, delivered: 4, timedOut: 1, p50: 20, p99: 40, max: 40, meanRecipients: 5 });
    expect(summarizeLags([], { samples: 0, noAudience: 0, timedOut: 0, recipients: 0 }).p99).toBeNaN();
  });

  it('samples at most the given number of posts a second, evenly', () => {
    const take = sampler(2);
    const taken = Array.from({ length: 30 }, (_, i) => i * 100).filter((now) => take(now)); // a post every 100 ms for 3 s
    expect(taken).toEqual([0, 500, 1000, 1500, 2000, 2500]);
    expect(sampler(0)(0)).toBe(false);
  });
});
