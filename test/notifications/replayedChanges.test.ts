import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectDatabase, type Database } from '../../src/db/connect.js';
import { NotificationGroups, type Joining, type MembershipChange } from '../../src/notifications/notificationGroups.js';
import { NotificationService } from '../../src/notifications/notificationService.js';
import type { GroupMemberSource } from '../../src/records/notifications.js';
import { testDatabaseUri } from '../support/testApp.js';

/**
 * A join or a leave replayed with its token (its request or task died after the group's write, and
 * the repair ran it again) changes nothing: "3 people liked this" stays 3, with the same faces,
 * whichever way the leave was written, the quick single write or the read-and-rewrite that puts
 * the next actor in front.
 */
describe('a group change applied again after a crash', () => {
  let database: Database;
  let groups: NotificationGroups;
  /** No member waits in line: every group here shows all its members. */
  const noOneElse: GroupMemberSource = {
    async *membersAfter() {},
    membersJoining: async () => [],
  };
  const group = 'l:replayed';
  const recipient = 'star';
  const shown = async () => {
    const found = (await groups.groups.findOne({ _id: group, r: recipient }))!;
    return { count: found.n, actors: found.a.map((actor) => actor.u), at: found.at.toISOString() };
  };
  const joining = (actor: string, second: number): Joining => ({
    group,
    recipient,
    token: `join-${actor}`,
    actor,
    kind: 'LIKE',
    postId: null,
    at: new Date(Date.UTC(2026, 0, 1, 0, 0, second)),
  });
  const leaving = (actor: string): MembershipChange => ({ group, recipient, token: `leave-${actor}`, actor });

  beforeAll(async () => {
    database = await connectDatabase(testDatabaseUri());
    groups = new NotificationGroups(NotificationService.collection(database.db));
  });
  afterAll(async () => {
    await database?.db.dropDatabase();
    await database?.close();
  });

  it('counts a replayed join once', async () => {
    for (const [second, actor] of ['ann', 'bob', 'cat'].entries()) {
      expect(await groups.join(joining(actor, second))).not.toBeNull();
      expect(await groups.join(joining(actor, second))).toBeNull(); // applied before: nothing written
    }
    expect(await shown()).toEqual({ count: 3, actors: ['cat', 'bob', 'ann'], at: '2026-01-01T00:00:02.000Z' });
  });

  it('counts a replayed leave of the newest actor once, however the group was rewritten', async () => {
    // The newest actor leaves: the group is read and rewritten with the next one in front.
    await groups.leave(leaving('cat'), noOneElse);
    await groups.leave(leaving('cat'), noOneElse);
    expect(await shown()).toEqual({ count: 2, actors: ['bob', 'ann'], at: '2026-01-01T00:00:01.000Z' });
  });

  it('counts a replayed leave of another actor once', async () => {
    // Not the newest: one write, whose filter a replay no longer matches.
    await groups.leave(leaving('ann'), noOneElse);
    await groups.leave(leaving('ann'), noOneElse);
    expect(await shown()).toEqual({ count: 1, actors: ['bob'], at: '2026-01-01T00:00:01.000Z' });
  });
});
