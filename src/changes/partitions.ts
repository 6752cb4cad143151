/**
 * How the live events are split between instance groups, so that no instance must read every
 * event of the service. Types and pure functions only, no I/O.
 *
 * Most events concern one person: a notification its recipient, a like's or bookmark's viewer
 * state its viewer. Those go to one of `livePartitions` partitions, by the person's handle, and
 * each instance group reads the partitions it owns. The rest (posts, follows, changes of users,
 * filters, lists and timelines) are needed by every instance that holds a follower, a reader or
 * a timeline, wherever its subscribers are, and stay broadcast: every group reads them.
 */
import { createHash, randomInt } from 'node:crypto';
import type { Document } from 'mongodb';
import { UnreachableCaseError } from '../errors.js';
import type { ChangeEvent } from './events.js';

/** Partitions of the per-person events. Fixed: a different number sends a person's events elsewhere. */
export const livePartitions = 256;

/**
 * Channels of the broadcast events, numbered after the partitions. Each event takes one at random,
 * so on a cluster (`live_events` keyed `{ ch, _id }`) their inserts spread over several shards.
 */
export const broadcastChannels = 16;

/** The partition of a person's events: a hash of the handle, the same on every instance. */
export function partitionOf(handle: string): number {
  return createHash('sha1').update(handle).digest().readUInt16BE(0) % livePartitions;
}

/** The one person an event concerns alone, or null when every group needs it. */
export function personOf(event: ChangeEvent): string | null {
  switch (event.kind) {
    case 'notificationAdded':
      return event.notification.recipientId;
    case 'counted':
      // The viewer's state is theirs alone; the counts it carries are held by every group, for a
      // short time only where groups split the events (see heldCaches.postCounts).
      return event.viewer?.id ?? null;
    case 'postAdded':
    case 'postRemoved':
    case 'postEdited':
    case 'followed':
    case 'unfollowed':
    case 'changed':
      return null;
    default:
      throw new UnreachableCaseError(event);
  }
}

/** The channel an event is stored under (`ch` of its `live_events` document). */
export function channelOf(event: ChangeEvent): number {
  const person = personOf(event);
  return person === null ? livePartitions + randomInt(broadcastChannels) : partitionOf(person);
}

/**
 * Which group owns a partition, by rendezvous hashing: the group whose hash with the partition is
 * highest. Adding a group moves to it only the partitions it now wins (about 1 / groups of them);
 * the others stay where they were, with the people whose connections are there.
 */
function ownerOf(partition: number, groups: number): number {
  let owner = 0;
  let highest = -1;
  for (let group = 0; group < groups; group++) {
    const weight = createHash('sha1').update(`${partition}:${group}`).digest().readUInt32BE(0);
    if (weight > highest) [owner, highest] = [group, weight];
  }
  return owner;
}

/** What an instance may hold in process, given the live events it reads. */
export interface HeldScope {
  /** Every event reaches this instance: anything held is kept exact by them. */
  readonly readsEverything: boolean;
  /** This person's own events reach this instance: their viewer states may be held. */
  holdsPerson(handle: string): boolean;
}

/**
 * One instance's share of the live events: group `index` of `count`. With one group it reads
 * every event and may hold any person's records; with more it reads its own partitions and the
 * broadcast channels, and holds in process only what those keep exact.
 */
export class LiveGroup implements HeldScope {
  /** The partitions this group reads, ascending. */
  readonly partitions: readonly number[];
  private readonly owners: readonly number[];

  constructor(
    readonly index: number,
    readonly count: number,
  ) {
    this.owners = Array.from({ length: livePartitions }, (_, partition) => (count === 1 ? 0 : ownerOf(partition, count)));
    this.partitions = this.owners.flatMap((owner, partition) => (owner === index ? [partition] : []));
  }

  /** Whether this group reads every event (there is one group). */
  get readsEverything(): boolean {
    return this.count === 1;
  }

  /** The group whose instances serve this person's live notifications. */
  groupOf(handle: string): number {
    return this.owners[partitionOf(handle)]!;
  }

  /** Whether this instance reads the events of this person's partition. */
  holdsPerson(handle: string): boolean {
    return this.groupOf(handle) === this.index;
  }

  /**
   * The change stream's filter on the stored channel, run on the database (on every shard, before
   * anything is sent); null when the group reads everything.
   */
  streamFilter(channel = 'fullDocument.ch'): Document | null {
    if (this.readsEverything) return null;
    return { $or: [{ [channel]: { $in: [...this.partitions] } }, { [channel]: { $gte: livePartitions } }] };
  }

  /** Whether this group reads the events stored under this channel. */
  readsChannel(channel: number): boolean {
    return channel >= livePartitions || this.owners[channel] === this.index;
  }
}

/** The one group of a deployment that does not split its events: it reads, and may hold, everything. */
export const everyEvent: HeldScope = new LiveGroup(0, 1);
