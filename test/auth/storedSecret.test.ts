import { afterAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/testApp.js';

/** Without JWT_SECRET, a restart or a second instance on the same database keeps accepting tokens. */
describe('the token secret kept in the database', () => {
  const apps: TestApp[] = [];
  afterAll(async () => {
    for (const app of apps.reverse()) await app.stop();
  });

  it('is made once and shared by every instance, across restarts', async () => {
    const first = await startTestApp({ JWT_SECRET: '' });
    apps.push(first);
    const token = await first.signUp('keeper');
    const second = await startTestApp({ JWT_SECRET: '', MONGODB_URI: first.mongodbUri });
    apps.push(second);
    expect((await second.gql('{ viewer { handle } }', {}, token)).data).toEqual({ viewer: { handle: 'keeper' } });

    await second.stop();
    apps.pop();
    const restarted = await startTestApp({ JWT_SECRET: '', MONGODB_URI: first.mongodbUri });
    apps.push(restarted);
    expect((await restarted.gql('{ viewer { handle } }', {}, token)).data).toEqual({ viewer: { handle: 'keeper' } });
    expect(await first.database.db.collection('feed_meta').countDocuments({ _id: 'jwtSecret' as never })).toBe(1);
  });
});
