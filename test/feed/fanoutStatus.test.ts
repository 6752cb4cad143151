import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/testApp.js';

const run = promisify(execFile);

/** `npm run fanout-status`, as an operator runs it against a deployment's database. */
describe('npm run fanout-status', () => {
  let app: TestApp;
  const status = async (...args: string[]) =>
    (
      await run(process.execPath, ['--import', 'tsx/esm', 'src/main.ts', 'fanout-status', ...args], {
        env: { ...process.env, MONGODB_URI: app.mongodbUri, FEED_STRATEGY: 'cache' },
      })
    ).stdout;

  beforeAll(async () => {
    app = await startTestApp({ FEED_STRATEGY: 'cache', FANOUT_WORKERS: '0' });
  });
  afterAll(() => app?.stop());

  it('reports queue depth, the oldest pending age and dead sub-tasks, and re-drives the dead on request', async () => {
    const queue = app.services.fanout.queue;
    await queue.tasks.insertMany([
      { _id: 'waiting-1', kind: 'deliver', payload: {}, state: 'ready', runAt: new Date(), claim: null, attempts: 0, createdAt: new Date(Date.now() - 90_000) },
      { _id: 'broken-1', kind: 'deliver', payload: {}, state: 'dead', runAt: new Date(), claim: null, attempts: 5, createdAt: new Date(), lastError: 'the database said no' },
    ]);
    const report = await status();
    expect(report).toMatch(/waiting sub-tasks\s+1\n/);
    expect(report).toMatch(/oldest pending age\s+9\d\.\d s/);
    expect(report).toMatch(/dead sub-tasks\s+1 /);
    expect(report).toContain('dead broken-1: the database said no');

    const redriven = await status('--redrive');
    expect(redriven).toMatch(/waiting sub-tasks\s+2\n/);
    expect(redriven).toMatch(/dead sub-tasks\s+0/);
    expect(await queue.tasks.findOne({ _id: 'broken-1' })).toMatchObject({ state: 'ready', attempts: 0 });
  });
});
