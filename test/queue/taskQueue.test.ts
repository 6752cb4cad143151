import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectDatabase, type Database } from '../../src/db/connect.js';
import { quietLogger } from '../../src/logger.js';
import { TaskQueue } from '../../src/queue/taskQueue.js';
import { RetryLater, TaskWorkers, type TaskHandler } from '../../src/queue/taskWorkers.js';
import { testDatabaseUri } from '../support/testApp.js';

/**
 * The queue's own clock, moved by the test alone: leases, back-offs and due times run on it, so a
 * lease ends exactly when the test says, however slowly the machine runs.
 */
function testClock() {
  let now = Date.now();
  return {
    now: () => now,
    advance: (ms: number) => void (now += ms),
  };
}
type TestClock = ReturnType<typeof testClock>;

/** The queue under fanout, driven directly: leases, takeover, retries, dead tasks and re-drive. */
describe('the durable task queue', () => {
  let database: Database;
  // Each queue in a database of its own: the queue's collection is the service's one.
  const databases: string[] = [];
  const newQueue = (clock: TestClock, options: Partial<ConstructorParameters<typeof TaskQueue>[2]> = {}) => {
    databases.push(`${database.db.databaseName}_${databases.length}`);
    return new TaskQueue(database.client.db(databases.at(-1)), 'fanout_tasks', { leaseMs: 200, maxAttempts: 3, retryBaseMs: 50, ...options }, clock.now);
  };
  /** Polls `condition` (real time) until it holds, doing `between` after each miss; generous, as only a broken queue needs it all. */
  const waitFor = async (condition: () => Promise<boolean>, what: string, between: () => void = () => {}) => {
    for (const started = Date.now(); !(await condition()); await new Promise((resolve) => setTimeout(resolve, 10))) {
      if (Date.now() - started > 20_000) throw new Error(`timed out waiting for ${what}`);
      between();
    }
  };

  beforeAll(async () => {
    database = await connectDatabase(testDatabaseUri(), { monitorCommands: true });
  });
  afterAll(async () => {
    for (const name of databases) await database?.client.db(name).dropDatabase();
    await database?.close();
  });

  it('queues a task once per id, hands it to one claimant at a time, oldest first', async () => {
    const clock = testClock();
    const queue = newQueue(clock);
    await queue.enqueue([{ _id: 'b', kind: 'k', payload: {}, runAt: new Date(clock.now() - 10) }]);
    await queue.enqueue([{ _id: 'a', kind: 'k', payload: {}, runAt: new Date(clock.now() - 20) }, { _id: 'b', kind: 'k', payload: { again: true } }]);
    expect(await queue.tasks.countDocuments()).toBe(2);
    expect((await queue.tasks.findOne({ _id: 'b' }))?.payload).toEqual({}); // the duplicate changed nothing
    // The three claims travel on different pooled connections, so the server may run them in any order:
    // which call gets which task is not defined, only that two get one task each and one gets nothing.
    const claims = await Promise.all([queue.claim(), queue.claim(), queue.claim()]);
    const claimed = claims.flatMap((task) => (task ? [task._id] : []));
    expect(claimed.sort()).toEqual(['a', 'b']);

    const ordered = newQueue(clock);
    await ordered.enqueue([{ _id: 'newer', kind: 'k', payload: {}, runAt: new Date(clock.now() - 10) }]);
    await ordered.enqueue([{ _id: 'older', kind: 'k', payload: {}, runAt: new Date(clock.now() - 60_000) }]);
    expect((await ordered.claim())?._id).toBe('older');
    expect((await ordered.claim())?._id).toBe('newer');
    expect(await ordered.claim()).toBeNull();
  });

  it('hands each task of racing batch claims to one claimant, renews a batch together and completes it at once', async () => {
    const queue = newQueue(testClock());
    await queue.enqueue(Array.from({ length: 30 }, (_, i) => ({ _id: `t${String(i).padStart(2, '0')}`, kind: 'k', payload: {} })));
    const batches = await Promise.all([queue.claimBatch(20), queue.claimBatch(20), queue.claimBatch(20)]);
    // A claimant that lost the race for the oldest tasks gets what it won, maybe nothing, and asks again.
    for (let more = await queue.claimBatch(20); more.length > 0; more = await queue.claimBatch(20)) batches.push(more);
    const claimed = batches.flat().map((task) => task._id);
    expect(claimed.sort()).toEqual(Array.from({ length: 30 }, (_, i) => `t${String(i).padStart(2, '0')}`));
    for (const batch of batches) expect(new Set(batch.map((task) => task.claim)).size).toBeLessThanOrEqual(1);
    const [first] = batches.filter((batch) => batch.length > 0);
    // A task of the batch that left the queue meanwhile was not taken over: the lease still holds.
    await queue.tasks.deleteOne({ _id: first![0]!._id });
    expect(await queue.extendBatch(first!)).toBe(true);
    await queue.completeBatch(first!);
    expect(await queue.tasks.countDocuments({ _id: { $in: first!.map((task) => task._id) } })).toBe(0);
    expect(await queue.tasks.countDocuments()).toBe(30 - first!.length);
  });

  it('claims a batch nobody races for in two round trips, and hands over each task as stored under the claim', async () => {
    const clock = testClock();
    const queue = newQueue(clock);
    // Queued in this order, a millisecond apart on the queue's clock, due in another: the batch
    // comes in the order they were queued.
    await queue.enqueue([{ _id: 'a', kind: 'k', payload: { n: 1 }, runAt: new Date(clock.now() - 10) }]);
    clock.advance(1);
    await queue.enqueue([{ _id: 'b', kind: 'k', payload: { n: 2 }, runAt: new Date(clock.now() - 60_000) }]);
    clock.advance(1);
    await queue.enqueue([{ _id: 'c', kind: 'k', payload: { n: 3 } }]);
    const commands: string[] = [];
    const count = (event: { commandName: string }) => commands.push(event.commandName);
    database.client.on('commandStarted', count);
    const batch = await queue.claimBatch(10).finally(() => database.client.off('commandStarted', count));
    expect(commands).toEqual(['find', 'update']);
    expect(batch.map((task) => task._id)).toEqual(['a', 'b', 'c']);
    expect(batch).toEqual(await Promise.all(['a', 'b', 'c'].map((id) => queue.tasks.findOne({ _id: id }))));
    expect(batch.every((task) => task.attempts === 1 && task.claim === batch[0]!.claim)).toBe(true);
  });

  it('lets another worker take a task over once its holder stops renewing the lease, and fences the old holder', async () => {
    const clock = testClock();
    const queue = newQueue(clock);
    await queue.enqueue([{ _id: 'slow', kind: 'k', payload: {} }]);
    const dead = (await queue.claim())!;
    expect(await queue.claim()).toBeNull(); // leased
    clock.advance(199);
    expect(await queue.claim()).toBeNull(); // leased to its last millisecond
    clock.advance(1);
    const takeover = (await queue.claim())!;
    expect(takeover).toMatchObject({ _id: 'slow', attempts: 2 });
    expect(await queue.extendBatch([dead])).toBe(false);
    await queue.complete(dead); // the old holder's late completion must not remove the new holder's task
    expect(await queue.tasks.countDocuments({ _id: 'slow' })).toBe(1);
    await queue.complete(takeover);
    expect(await queue.isDrained()).toBe(true);
  });

  it('retries a failing task with growing back-off, parks it as dead after the last attempt, and re-drives it', async () => {
    const clock = testClock();
    const queue = newQueue(clock, { maxAttempts: 3, retryBaseMs: 40 });
    await queue.enqueue([{ _id: 'flaky', kind: 'k', payload: {} }]);
    const backOffs: number[] = [];
    for (let attempt = 1; attempt <= 3; attempt++) {
      const task = (await queue.claim())!;
      expect(task.attempts).toBe(attempt);
      expect(await queue.fail(task, new Error(`boom ${attempt}`))).toBe(attempt < 3 ? 'retry' : 'dead');
      if (attempt === 3) break;
      const backOff = (await queue.tasks.findOne({ _id: 'flaky' }))!.runAt.getTime() - clock.now();
      backOffs.push(backOff);
      // Not a moment before its back-off is over.
      clock.advance(backOff - 1);
      expect(await queue.claim()).toBeNull();
      clock.advance(1);
    }
    expect(backOffs).toEqual([40, 80]); // doubled
    expect(await queue.claim()).toBeNull();
    expect(await queue.status()).toMatchObject({ dead: 1, waiting: 0, running: 0 });
    expect((await queue.dead(10))[0]).toMatchObject({ _id: 'flaky', lastError: 'boom 3' });
    expect(await queue.isDrained()).toBe(true);

    expect(await queue.redrive()).toBe(1);
    expect(await queue.claim()).toMatchObject({ _id: 'flaky', attempts: 1 });
  });

  it('parks a task whose holders keep dying as dead instead of claiming it forever', async () => {
    const clock = testClock();
    const queue = newQueue(clock, { maxAttempts: 2, leaseMs: 50 });
    await queue.enqueue([{ _id: 'cursed', kind: 'k', payload: {} }]);
    for (let i = 0; i < 2; i++) {
      expect(await queue.claim()).toMatchObject({ _id: 'cursed' });
      clock.advance(50); // the holder dies: no renewal, no completion, and its lease runs out
    }
    expect(await queue.claim()).toBeNull();
    expect((await queue.dead(1))[0]?.lastError).toMatch(/stopped 2 times/);
  });

  it('keeps a task three leases long with its holder while the heartbeat renews the lease, though other workers keep claiming', async () => {
    const clock = testClock();
    const leaseMs = 90;
    const queue = newQueue(clock, { leaseMs, maxAttempts: 2 });
    const runs: number[] = [];
    let claims = 0;
    const countClaims = (event: { commandName: string; command: Record<string, unknown> }) => {
      if (event.commandName === 'findAndModify' && event.command.findAndModify === queue.tasks.collectionName) claims++;
    };
    const leaseEnd = async () => (await queue.tasks.findOne({ _id: 'long-1' }))!.runAt.getTime();
    const handlers: Record<string, TaskHandler> = {
      // Runs three leases long on the queue's clock. The clock moves half a lease at a time, and
      // only once the heartbeat has renewed the lease since the last move: a lease never runs out
      // under a live heartbeat, however slowly the machine runs, and without one the task never ends.
      long: async (task, run) => {
        runs.push(task.attempts);
        for (let moved = 0; moved < 3 * leaseMs; moved += leaseMs / 2) {
          clock.advance(leaseMs / 2);
          await waitFor(async () => (await leaseEnd()) >= clock.now() + leaseMs, 'the heartbeat to renew the lease');
        }
        // Another worker asks for work now that the first lease is long over, and gets none.
        const claimsSoFar = claims;
        await waitFor(async () => claims > claimsSoFar, 'another worker to look for work');
        await run.checkpoint();
      },
    };
    const workers = new TaskWorkers(queue, handlers, { concurrency: 3, logger: quietLogger, maxIdleMs: 20 });
    database.client.on('commandStarted', countClaims);
    try {
      workers.start();
      await queue.enqueue([{ _id: 'long-1', kind: 'long', payload: {} }]);
      workers.wake();
      await waitFor(() => queue.isDrained(), 'the workers to finish');
    } finally {
      await workers.stop();
      database.client.off('commandStarted', countClaims);
    }
    expect(runs).toEqual([1]); // one run, on its first claim: nobody took it over
    expect(await queue.dead(10)).toEqual([]);
  });

  it('runs tasks in workers that postpone without spending attempts, and record failures', async () => {
    const clock = testClock();
    // Leases far longer than the clock moves here: only back-offs and postponements come due.
    const queue = newQueue(clock, { leaseMs: 3_600_000, maxAttempts: 2, retryBaseMs: 20 });
    const ran: string[] = [];
    let postponed = 0;
    const handlers: Record<string, TaskHandler> = {
      later: async (task) => {
        if (postponed++ < 3) throw new RetryLater(10, 'not yet');
        ran.push(task._id);
      },
      broken: async () => {
        throw new Error('always');
      },
    };
    const workers = new TaskWorkers(queue, handlers, { concurrency: 3, logger: { ...quietLogger, error: () => {} }, maxIdleMs: 20 });
    try {
      workers.start();
      await queue.enqueue([
        { _id: 'later-1', kind: 'later', payload: {} },
        { _id: 'broken-1', kind: 'broken', payload: {} },
      ]);
      workers.wake();
      // Time moves on only while the test waits, so each postponement and back-off comes due.
      await waitFor(async () => (await queue.isDrained()) && ran.length === 1, 'the workers to finish', () => clock.advance(10));
    } finally {
      await workers.stop();
    }
    expect(ran).toEqual(['later-1']); // postponed three times with two attempts, then ran once
    expect(postponed).toBe(4);
    expect((await queue.dead(10)).map((task) => ({ id: task._id, error: task.lastError }))).toEqual([{ id: 'broken-1', error: 'always' }]);
  });

  it('gives the claimed tasks it has not started back when it stops, so another worker need not wait out the lease', async () => {
    const queue = newQueue(testClock(), { leaseMs: 60_000 });
    let release!: () => void;
    const started: string[] = [];
    const handlers: Record<string, TaskHandler> = {
      slow: async (task) => {
        started.push(task._id);
        if (started.length === 1) await new Promise<void>((resolve) => (release = resolve));
      },
    };
    await queue.enqueue(['a', 'b', 'c', 'd'].map((id) => ({ _id: id, kind: 'slow', payload: {}, origin: { requestId: 'queued-by-test' } })));
    const workers = new TaskWorkers(queue, handlers, { concurrency: 1, claimBatch: 4, logger: quietLogger, maxIdleMs: 20 });
    workers.start();
    await waitFor(async () => started.length === 1, 'the first task to start');
    const stopping = workers.stop();
    release();
    await stopping;

    expect(started).toEqual(['a']); // it finished the task it had started, and started no other
    const left = await queue.tasks.find().sort({ _id: 1 }).toArray();
    expect(left.map((task) => task._id)).toEqual(['b', 'c', 'd']);
    for (const task of left) {
      // Claimable now, by anyone, with no attempt spent, and still naming the request that queued it.
      expect(task).toMatchObject({ state: 'ready', claim: null, attempts: 0, origin: { requestId: 'queued-by-test' } });
      expect(task.runAt.getTime()).toBeLessThanOrEqual(Date.now());
    }
    expect((await queue.claimBatch(10)).map((task) => task._id).sort()).toEqual(['b', 'c', 'd']);
  });

  it('has one idle worker claim work queued in this process, at once and once, and polls an empty queue no more than once a poll', async () => {
    const clock = testClock();
    const queue = newQueue(clock, { leaseMs: 60_000 });
    const ran: string[] = [];
    // Polls a minute apart: only a wake can have a task claimed within the test's wait.
    const workers = new TaskWorkers(queue, { note: async (task) => void ran.push(task._id) }, { concurrency: 2, claimBatch: 50, logger: quietLogger, maxIdleMs: 60_000 });
    const commands: string[] = [];
    const record = (event: { commandName: string; databaseName: string }) => {
      if (event.databaseName === queue.tasks.dbName && ['find', 'update', 'findAndModify'].includes(event.commandName)) commands.push(event.commandName);
    };
    database.client.on('commandStarted', record);
    workers.start();
    try {
      // Both workers found the queue empty, and sleep until the poll.
      await waitFor(async () => commands.length >= 2, 'both workers to look at the empty queue');
      expect(commands).toEqual(['find', 'find']);
      commands.length = 0;
      for (const id of ['first', 'second', 'third']) {
        await queue.enqueue([{ _id: id, kind: 'note', payload: {} }]);
        workers.wake();
        await waitFor(async () => ran.includes(id), `task ${id} to run`);
      }
      // Each was claimed by one worker: one look and one claim each, and no look at the empty queue after it.
      expect(commands).toEqual(['find', 'update', 'find', 'update', 'find', 'update']);
    } finally {
      database.client.off('commandStarted', record);
      await workers.stop();
    }
  });
});
