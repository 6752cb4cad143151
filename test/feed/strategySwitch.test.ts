import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp } from '../../src/app.js';
import { ConfigError, loadConfig } from '../../src/config.js';
import { connectDatabase } from '../../src/db/connect.js';
import { rebuildTimelines } from '../../src/feed/rebuild.js';
import { quietLogger } from '../../src/logger.js';
import { createServices } from '../../src/services.js';
import { startTestApp, testDatabaseUri, type TestApp } from '../support/testApp.js';

/** Switching FEED_STRATEGY on a database that already has posts, as an operator would. */
describe('switching FEED_STRATEGY on an existing database', () => {
  const mongodbUri = testDatabaseUri();
  let app: TestApp;
  let token: string;

  const texts = async (current: TestApp) =>
    (await current.gql('{ timeline(first: 50) { edges { node { text } } } }', {}, token)).data.timeline.edges.map((e: any) => e.node.text);

  beforeAll(async () => {
    app = await startTestApp({ MONGODB_URI: mongodbUri, FEED_STRATEGY: 'fanout-on-read' });
    token = await app.signUp('switcher');
    const other = await app.signUp('poster');
    await app.gql('mutation { follow(handle: "poster") { handle } }', {}, token);
    for (let i = 0; i < 6; i++) await app.gql(`mutation { createPost(text: "before the switch ${i}") { id } }`, {}, i % 2 ? token : other);
    await app.stop();
  });
  afterAll(async () => {
    await app?.stop();
    const database = await connectDatabase(mongodbUri);
    await database.db.dropDatabase();
    await database.close();
  });

  it('refuses to start a bucket strategy whose timelines miss stored posts, naming the rebuild command', async () => {
    const config = loadConfig({ PORT: '0', JWT_SECRET: 'test-secret-that-is-at-least-32-characters', FEED_STRATEGY: 'time-buckets' });
    const starting = startApp(config, { mongodbUri, logger: quietLogger });
    await expect(starting).rejects.toThrow(ConfigError);
    await expect(starting).rejects.toThrow(/npm run rebuild-timelines/);
  });

  it('serves the same timeline after the rebuild', async () => {
    const environment = { FEED_STRATEGY: 'time-buckets', TIMELINE_BUCKET_SPAN: '0.01' };
    const config = loadConfig({ JWT_SECRET: 'test-secret-that-is-at-least-32-characters', ...environment });
    const database = await connectDatabase(mongodbUri);
    const progress: number[] = [];
    await rebuildTimelines(createServices(database.db, config), (done) => progress.push(done));
    await database.close();
    expect(progress.at(-1)).toBe(6);

    app = await startTestApp({ MONGODB_URI: mongodbUri, ...environment });
    expect(await texts(app)).toEqual(Array.from({ length: 6 }, (_, i) => `before the switch ${5 - i}`));
    await app.stop();
  });

  it('drops a cache left from an earlier run, so it is rebuilt lazily and shows later posts', async () => {
    app = await startTestApp({ MONGODB_URI: mongodbUri, FEED_STRATEGY: 'cache' });
    expect(await texts(app)).toHaveLength(6);
    await app.stop();

    app = await startTestApp({ MONGODB_URI: mongodbUri, FEED_STRATEGY: 'fanout-on-read' });
    await app.gql('mutation { createPost(text: "while the cache was off") { id } }', {}, token);
    await app.stop();

    app = await startTestApp({ MONGODB_URI: mongodbUri, FEED_STRATEGY: 'cache' });
    expect((await texts(app))[0]).toBe('while the cache was off');
  });
});
