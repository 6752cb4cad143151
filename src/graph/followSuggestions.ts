import type { Collection, Document } from 'mongodb';
import { maxFollowedBy, type SuggestionRecord } from '../records/suggestions.js';
import type { EdgeDocument, UserDocument } from '../records/users.js';
import type { ReaderFilters } from './readerFilters.js';
import { existingUsers } from './userDirectory.js';

/** Followees whose follows are read for one answer; beyond, a random sample of this many. */
export const maxSampledFollowees = 500;
/** Follow edges of the sampled followees read for one answer, at most. */
export const maxReadEdges = 20_000;
/** Rounds of reading candidates' users, when deleted accounts leave the answer short. */
const maxUserRounds = 3;

/** Candidates from the followees' follows: how many of them follow each, and which. */
type Candidates = Map<string, { count: number; followedBy: string[] }>;

/** How the followees' follows are counted: Socialite's two ways. */
export type SuggestionMethod = 'queries' | 'aggregation';

/**
 * Whom to follow: accounts followed by the people the viewer follows (friends of friends), ranked
 * by how many of them follow each, then by follower count, then by handle. Never the viewer, an
 * account already followed, one blocked either way or muted, or a deleted account.
 *
 * Bounded whatever the graph: the follows of at most `maxSampledFollowees` followees (a random
 * sample beyond), at most `maxReadEdges` of them, and a fixed number of queries. Within that, the
 * ranking is exact; when the viewer follows more (or the edges were cut), the suggestions' counts
 * and `followedBy` are made exact by one more query over the `followers` edges.
 *
 * Socialite's UserGraphService counts the friends of friends in two ways, both here: one
 * aggregation that groups the edges in the database (`getFriendsOfFriendsAgg`), or a query for
 * the edges counted in this process (`getFriendsOfFriendsQuery`). docs/lists.md has their
 * measurements; `served` is the faster.
 */
export class FollowSuggestions {
  readonly served: SuggestionMethod = 'queries';

  constructor(
    private readonly following: Collection<EdgeDocument>,
    private readonly followers: Collection<EdgeDocument>,
    private readonly users: Collection<UserDocument>,
    private readonly followingIds: (handle: string) => Promise<string[]>,
    private readonly readerFilters: Pick<ReaderFilters, 'of'>,
  ) {}

  suggest(viewerId: string, limit: number): Promise<SuggestionRecord[]> {
    return this.suggestBy(this.served, viewerId, limit);
  }

  async suggestBy(method: SuggestionMethod, viewerId: string, limit: number): Promise<SuggestionRecord[]> {
    const [followees, view] = await Promise.all([this.followingIds(viewerId), this.readerFilters.of(viewerId)]);
    if (followees.length === 0 || limit < 1) return [];
    const sampled = followees.length > maxSampledFollowees ? sample(followees, maxSampledFollowees) : followees;
    const { candidates, cut } = method === 'queries' ? await this.countByQuery(sampled) : await this.countByAggregation(sampled);
    const followed = new Set(followees);
    for (const handle of candidates.keys()) {
      if (handle === viewerId || followed.has(handle) || view.hides(handle)) candidates.delete(handle);
    }
    const picked = await this.rank(candidates, limit);
    const exact = sampled.length === followees.length && !cut ? picked : await this.exactly(picked, followees);
    return exact.map(toRecord);
  }

  /** Socialite's query way: the edges, counted here. */
  private async countByQuery(followees: readonly string[]): Promise<{ candidates: Candidates; cut: boolean }> {
    const edges = await this.following
      .find({ _f: { $in: [...followees] } }, { projection: { _id: 0, _f: 1, _t: 1 } })
      .limit(maxReadEdges)
      .toArray();
    const candidates: Candidates = new Map();
    for (const edge of edges) {
      const candidate = candidates.get(edge._t);
      if (candidate) {
        candidate.count++;
        candidate.followedBy.push(edge._f);
      } else candidates.set(edge._t, { count: 1, followedBy: [edge._f] });
    }
    return { candidates, cut: edges.length === maxReadEdges };
  }

  /** Socialite's aggregation way: the edges grouped by followed account in the database. */
  private async countByAggregation(followees: readonly string[]): Promise<{ candidates: Candidates; cut: boolean }> {
    const pipeline: Document[] = [
      { $match: { _f: { $in: [...followees] } } },
      { $limit: maxReadEdges },
      { $group: { _id: '$_t', count: { $sum: 1 }, followedBy: { $push: '$_f' } } },
    ];
    const groups = await this.following.aggregate<{ _id: string; count: number; followedBy: string[] }>(pipeline).toArray();
    let edges = 0;
    const candidates: Candidates = new Map();
    for (const group of groups) {
      edges += group.count;
      candidates.set(group._id, { count: group.count, followedBy: group.followedBy });
    }
    return { candidates, cut: edges === maxReadEdges };
  }

  /**
   * The best `limit` candidates that still exist, by count, follower count and handle: reads the
   * users of every candidate at or above the `limit`-th count, lower only when deleted accounts
   * left the answer short.
   */
  private async rank(candidates: Candidates, limit: number): Promise<Ranked[]> {
    const byCount = [...candidates.entries()].sort((a, b) => b[1].count - a[1].count);
    const ranked: Ranked[] = [];
    let next = 0;
    for (let round = 0; round < maxUserRounds && next < byCount.length && ranked.length < limit; round++) {
      const threshold = byCount[Math.min(next + limit - ranked.length, byCount.length) - 1]![1].count;
      const start = next;
      while (next < byCount.length && byCount[next]![1].count >= threshold) next++;
      const batch = byCount.slice(start, next);
      const users = await this.users
        .find({ _id: { $in: batch.map(([handle]) => handle) }, ...existingUsers }, { projection: { _id: 1, followerCount: 1 } })
        .toArray();
      const followerCounts = new Map(users.map((user) => [user._id, user.followerCount]));
      for (const [userId, { count, followedBy }] of batch) {
        const followers = followerCounts.get(userId);
        if (followers !== undefined) ranked.push({ userId, mutualCount: count, followers, followedBy });
      }
    }
    return ranked.sort(byRank).slice(0, limit);
  }

  /** The picked suggestions' counts over all of the viewer's followees, from the `followers` edges. */
  private async exactly(picked: Ranked[], followees: readonly string[]): Promise<Ranked[]> {
    if (picked.length === 0) return picked;
    const edges = await this.followers
      .find({ _f: { $in: picked.map((suggestion) => suggestion.userId) }, _t: { $in: [...followees] } }, { projection: { _id: 0, _f: 1, _t: 1 } })
      .toArray();
    const byUser = new Map<string, string[]>();
    for (const edge of edges) {
      const list = byUser.get(edge._f);
      if (list) list.push(edge._t);
      else byUser.set(edge._f, [edge._t]);
    }
    return picked
      .map((pick) => {
        const followedBy = byUser.get(pick.userId) ?? [];
        return { ...pick, mutualCount: followedBy.length, followedBy };
      })
      .sort(byRank);
  }
}

interface Ranked extends SuggestionRecord {
  followers: number;
}

const byRank = (a: Ranked, b: Ranked) => b.mutualCount - a.mutualCount || b.followers - a.followers || (a.userId < b.userId ? -1 : 1);

const toRecord = ({ userId, mutualCount, followedBy }: Ranked): SuggestionRecord => ({
  userId,
  mutualCount,
  followedBy: [...followedBy].sort().slice(0, maxFollowedBy),
});

/** `size` of `items`, chosen uniformly at random (a partial Fisher-Yates shuffle). */
function sample<T>(items: readonly T[], size: number): T[] {
  const copy = [...items];
  for (let i = 0; i < size; i++) {
    const j = i + Math.floor(Math.random() * (copy.length - i));
    [copy[i], copy[j]] = [copy[j]!, copy[i]!];
  }
  return copy.slice(0, size);
}
