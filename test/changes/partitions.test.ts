import { ObjectId } from 'mongodb';
import { describe, expect, it } from 'vitest';
import { changed, counted, followChange, notificationAdded, postEdited } from '../../src/changes/events.js';
import { broadcastChannels, channelOf, LiveGroup, livePartitions, partitionOf } from '../../src/changes/partitions.js';
import type { NotificationRecord } from '../../src/records/notifications.js';

const notification = (recipientId: string): NotificationRecord => ({
  id: `f:${recipientId}:2026-11-27`,
  recipientId,
  kind: 'FOLLOW',
  updatedAt: new Date(),
  actorIds: ['someone'],
  actorCount: 1,
  postId: null,
  version: 1,
});

describe('live event partitions', () => {
  it("stores a person's events under their partition and every other event on a broadcast channel", () => {
    const postId = new ObjectId();
    expect(channelOf(notificationAdded(notification('ada')))).toBe(partitionOf('ada'));
    expect(channelOf(counted(postId, { likes: 1, reposts: 0, replies: 0, quotes: 0, version: 1 }, { id: 'bob', state: 'like' }))).toBe(partitionOf('bob'));
    for (const event of [
      counted(postId, 'stale'),
      followChange(true, 'ada', 'bob'),
      changed({ filters: ['ada'] }),
      postEdited({ id: postId, authorId: 'ada' }, []),
    ]) {
      const channel = channelOf(event);
      expect(channel).toBeGreaterThanOrEqual(livePartitions);
      expect(channel).toBeLessThan(livePartitions + broadcastChannels);
    }
  });

  it('gives every partition to exactly one group, and a person to the group owning their partition', () => {
    for (const count of [1, 2, 3, 5, 8]) {
      const groups = Array.from({ length: count }, (_, index) => new LiveGroup(index, count));
      const owned = groups.flatMap((group) => group.partitions);
      expect(owned.sort((a, b) => a - b)).toEqual(Array.from({ length: livePartitions }, (_, partition) => partition));
      for (const handle of ['ada', 'bob', 'carol', '东京', 'x'.repeat(30)]) {
        const holders = groups.filter((group) => group.holdsPerson(handle));
        expect(holders.map((group) => group.index)).toEqual([groups[0]!.groupOf(handle)]);
        expect(holders[0]!.partitions).toContain(partitionOf(handle));
      }
    }
  });

  it('moves only the partitions a new group wins when a group is added, so most people keep their instances', () => {
    const someone = new Map<number, string>();
    for (let i = 0; someone.size < livePartitions; i++) if (!someone.has(partitionOf(`p${i}`))) someone.set(partitionOf(`p${i}`), `p${i}`);
    for (const count of [2, 4, 8]) {
      const before = new LiveGroup(0, count);
      const after = new LiveGroup(0, count + 1);
      const added = new LiveGroup(count, count + 1);
      let moved = 0;
      for (let partition = 0; partition < livePartitions; partition++) {
        const handle = someone.get(partition)!;
        if (before.groupOf(handle) !== after.groupOf(handle)) {
          moved++;
          // A partition that moves goes to the new group, never between old ones.
          expect(added.holdsPerson(handle)).toBe(true);
        }
      }
      // About 1 / (count + 1) of them: between half and twice that share.
      expect(moved).toBeGreaterThan(livePartitions / (count + 1) / 2);
      expect(moved).toBeLessThan((2 * livePartitions) / (count + 1));
    }
  });

  it('filters the change stream only when groups split the events', () => {
    expect(new LiveGroup(0, 1).streamFilter()).toBeNull();
    const group = new LiveGroup(1, 4);
    expect(group.streamFilter()).toEqual({ $or: [{ 'fullDocument.ch': { $in: group.partitions } }, { 'fullDocument.ch': { $gte: livePartitions } }] });
  });
});
