import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TaskDocument } from '../../src/queue/taskQueue.js';
import { startTestApp, type TestApp } from '../support/testApp.js';
import { listed } from './support.js';

const recipients = ['star_a', 'star_b', 'star_c'];
const fans = Array.from({ length: 12 }, (_, i) => `fan_${String(i).padStart(2, '0')}`);

/**
 * Follow notifications claimed together are built as one piece of work: each step (leases, truths,
 * changes, counts, settling) one command for all of them. This instance runs no worker; each test
 * claims the queued tasks and hands them to the batch handler itself, as a worker does.
 */
describe('notification members reconciled together', () => {
  let app: TestApp;
  const tokens: Record<string, string> = {};
  const follow = (fan: string, star: string, on = true) =>
    app.gql(`mutation { ${on ? 'follow' : 'unfollow'}(handle: "${star}") { handle } }`, {}, tokens[fan]);
  const claimAll = () => app.services.fanout.queue.claimBatch(1000);
  const runBatch = async (tasks: TaskDocument[]) => {
    const left = await app.services.notifications.batchHandlers['notify-member']!(tasks, { attempt: 1, checkpoint: async () => {} });
    await app.services.fanout.queue.completeBatch(tasks.filter((task) => !left.includes(task)));
    return left;
  };
  const runAlone = async (tasks: TaskDocument[]) => {
    for (const task of tasks) {
      await app.services.fanout.handle(task, { attempt: 2, checkpoint: async () => {} });
      await app.services.fanout.queue.complete(task);
    }
  };
  const groupsOf = (star: string) => app.database.db.collection<any>('notifications').find({ r: star }).toArray();
  const followsShown = (star: string) => listed(app, tokens[star]!, { kinds: ['FOLLOW'] });
  /** The newest `count` of `who`, newest first, as the API lists them (each followed after the one before). */
  const newestOf = (who: readonly string[], count = 20) => who.slice(-count).reverse().join(',');

  beforeAll(async () => {
    app = await startTestApp({ FANOUT_WORKERS: '0' });
    for (const handle of [...recipients, ...fans]) tokens[handle] = await app.signUp(handle);
  });
  afterAll(() => app?.stop());

  it('builds the follows of three people in a fixed number of commands, exactly as one by one would', async () => {
    for (const fan of fans) for (const star of recipients) await follow(fan, star);
    const tasks = await claimAll();
    expect(tasks).toHaveLength(fans.length * recipients.length);
    let left: TaskDocument[] = [];
    // The live-event stream's own polling is not the batch's.
    const commands = (await app.commandsDuring(async () => void (left = await runBatch(tasks)))).filter((command) => command.commandName !== 'getMore');
    expect(left).toEqual([]);
    // However many memberships: the leases (two), the truths (one), the changes recorded, the
    // counts (a write and a read), the members settled, the tasks completed; and for each of the
    // three groups its recipient's filters, its newest actors read and rewritten, its announcement.
    expect(commands.length).toBeLessThanOrEqual(8 + 3 * 4);
    for (const star of recipients) expect(await followsShown(star)).toEqual([`FOLLOW ${fans.length} [${newestOf(fans)}]`]);
  });

  it('counts leaves and a re-follow in one batch, and leaves a member another worker holds to run alone', async () => {
    const [held, ...others] = fans;
    for (const fan of fans) await follow(fan, 'star_a', false);
    await follow(others[0]!, 'star_a');
    const members = app.database.db.collection<any>('notification_actors');
    // Another worker is bringing `held` in line right now.
    await members.updateOne({ _id: `f:star_a|${held}` }, { $set: { lease: { owner: 'another worker', until: new Date(Date.now() + 60_000) } } });
    const left = await runBatch(await claimAll());
    // The held member, and the re-follow's second task for a member the batch already has.
    expect(left.map((task) => (task.payload as { actor: string }).actor).sort()).toEqual([held, others[0]]);
    // Until it lets go, the held one still counts.
    expect((await groupsOf('star_a')).map((group) => [group.n, group.a.map((actor: { u: string }) => actor.u)])).toEqual([[2, [others[0], held]]]);
    await members.updateOne({ _id: `f:star_a|${held}` }, { $set: { lease: null } });
    await runAlone(left);
    expect(await followsShown('star_a')).toEqual([`FOLLOW 1 [${others[0]}]`]);
    expect((await groupsOf('star_a')).map((group) => group.tk ?? [])).toEqual([[]]);
  });

  it('gives its leases back when a step fails, and the runs alone finish every change once', async () => {
    for (const fan of fans) await follow(fan, 'star_b', false);
    const tasks = await claimAll();
    const members = app.services.notifications.groups.members;
    const bulkWrite = members.bulkWrite.bind(members);
    let calls = 0;
    // Leases taken and changes recorded and counted, then the write that settles the members fails.
    members.bulkWrite = (async (...args: Parameters<typeof bulkWrite>) => {
      if (++calls === 3) throw new Error('the database went away');
      return bulkWrite(...args);
    }) as typeof members.bulkWrite;
    try {
      await expect(runBatch(tasks)).rejects.toThrow('the database went away');
    } finally {
      members.bulkWrite = bulkWrite;
    }
    expect(await members.countDocuments({ 'lease.owner': { $exists: true } })).toBe(0);
    expect(await members.countDocuments({ change: { $exists: true } })).toBe(fans.length); // recorded, not settled
    // Another batch leaves every one of them alone: a recorded change is finished first, by `reconcile`.
    expect(await runBatch(tasks)).toHaveLength(fans.length);
    await runAlone(tasks);
    expect(await followsShown('star_b')).toEqual([]);
    expect(await groupsOf('star_b')).toEqual([]);
    expect(await members.countDocuments({ g: { $regex: '^f:star_b' } })).toBe(0);
  });
});
