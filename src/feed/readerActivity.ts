import type { FanoutOptions } from '../config.js';
import type { UserFeedState } from '../graph/userFeedState.js';
import type { Fanout } from './fanout.js';
import type { FeedBackend } from './feedBackend.js';
import type { UserDocument } from '../records/users.js';

/** How long this process trusts what it last learnt about a reader's activity. */
const activityMemoMaxMs = 60 * 60 * 1000;
/** Readers remembered at once; the memo starts over beyond this. */
const activityMemoLimit = 100_000;

export interface ReaderActivityDependencies {
  feedState: Pick<UserFeedState, 'markActiveRead' | 'readerActivity' | 'openTimelineGap' | 'markRead'>;
  backend: FeedBackend;
  fanout: Pick<Fanout, 'enqueueGapFill'>;
  options: Pick<FanoutOptions, 'activeReaderMs'>;
}

/**
 * Who reads, and whether their materialized timeline is complete: fanout skips readers away longer
 * than ACTIVE_READER_DAYS, so a returning reader's timeline has a gap until it is refilled.
 */
export class ReaderActivity {
  /** Readers whose activity this process recorded recently: no database write per page. */
  private readonly activeReaders = new Map<string, number>();

  constructor(private readonly deps: ReaderActivityDependencies) {}

  /**
   * Records that `userId` reads, and whether their materialized timeline is complete. A reader back
   * from more than ACTIVE_READER_DAYS away missed the deliveries fanout skipped: a lazily built cache
   * is dropped (this read rebuilds it); bucket timelines get a gap that workers refill from
   * `content`, and until then this reader's pages come from `content`, complete and never partial.
   * The gap is opened before the reader counts as active again, so a crash in between repeats
   * the return rather than losing it.
   */
  async hasTimelineGap(userId: string): Promise<boolean> {
    const { feedState: graph, fanout, options } = this.deps;
    const now = Date.now();
    const memo = this.activeReaders.get(userId);
    if (memo !== undefined && now - memo < Math.min(activityMemoMaxMs, options.activeReaderMs / 4)) return false;

    // The common case, a reader still active: the read is marked and the open gap read in one write.
    const active = await graph.markActiveRead(userId, new Date(now), new Date(now - options.activeReaderMs));
    const gap = active ? (active.timelineGap ?? null) : await this.markReturningRead(userId, now);
    if (gap) {
      await fanout.enqueueGapFill(userId, gap.since);
      return true;
    }
    if (this.activeReaders.size >= activityMemoLimit) this.activeReaders.clear();
    this.activeReaders.set(userId, now);
    return false;
  }

  /**
   * The read of a reader who was not active (away long, or never marked): the cache is dropped or
   * the gap opened first, then the read marked. Returns the gap open now, if any.
   */
  private async markReturningRead(userId: string, now: number): Promise<NonNullable<UserDocument['timelineGap']> | null> {
    const { feedState: graph, backend, options } = this.deps;
    const reader = await graph.readerActivity(userId);
    let gap = reader?.timelineGap ?? null;
    const lastRead = reader?.readAt;
    if (lastRead && now - lastRead.getTime() > options.activeReaderMs) {
      if (backend.rebuild === 'lazy') {
        await backend.readerReturned(userId);
      } else if (!gap) {
        // One whole window back: covers posts whose fanout ran late, after this reader went quiet.
        const from = new Date(lastRead.getTime() - options.activeReaderMs);
        await graph.openTimelineGap(userId, from);
        gap = (await graph.readerActivity(userId))?.timelineGap ?? null;
      }
    }
    await graph.markRead(userId, new Date(now));
    return gap;
  }
}
