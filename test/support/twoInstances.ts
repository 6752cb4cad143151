import { afterAll, beforeAll } from 'vitest';
import { follow } from '../live/liveClient.js';
import { startTestApp, type TestApp } from './testApp.js';

/** Two instances of one strategy on one database, and the accounts signed up through the first. */
export interface TwoInstances {
  a: TestApp;
  b: TestApp;
  tokens: Record<string, string>;
}

/**
 * Registers the hooks that start two instances of `strategy` on one database, with `ada` followed
 * by `bea` and `bea` by `cal`: the chain a post's copies travel (ada's post in bea's timeline, bea's
 * repost of it in cal's). Read the fields inside tests: they are set once the hooks ran.
 */
export function twoInstancesWithAFollowChain(strategy: string): TwoInstances {
  const instances = { tokens: {} } as TwoInstances;
  beforeAll(async () => {
    instances.a = await startTestApp({ FEED_STRATEGY: strategy });
    instances.b = await startTestApp({ FEED_STRATEGY: strategy, MONGODB_URI: instances.a.mongodbUri });
    for (const handle of ['ada', 'bea', 'cal']) instances.tokens[handle] = await instances.a.signUp(handle);
    await follow(instances.a, instances.tokens.bea!, 'ada');
    await follow(instances.a, instances.tokens.cal!, 'bea');
  });
  afterAll(async () => {
    await instances.b?.stop();
    await instances.a?.stop();
  });
  return instances;
}
