import type { CommandStartedEvent } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/testApp.js';
import { createPost, like, notificationsOf, unlike } from './support.js';

const markRead = 'mutation($upTo: String!) { markNotificationsRead(upTo: $upTo) { unreadCount } }';

describe('unread notifications and the read marker', () => {
  let app: TestApp;
  const tokens: Record<string, string> = {};

  beforeAll(async () => {
    app = await startTestApp();
    for (const handle of ['vic', 'wes', 'xia', 'yan']) tokens[handle] = await app.signUp(handle);
  });
  afterAll(() => app?.stop());

  it('counts what is newer than the marker, which never moves backwards, on every device', async () => {
    const first = await createPost(app, tokens.vic!, 'one');
    const second = await createPost(app, tokens.vic!, 'two');
    await like(app, tokens.wes!, first);
    await like(app, tokens.wes!, second);
    let page = await notificationsOf(app, tokens.vic!);
    expect(page.unreadCount).toBe(2);
    expect(page.items.map((item) => item.unread)).toEqual([true, true]);

    // Read up to the older one: the newer stays unread.
    const [newer, older] = page.items;
    expect((await app.gql(markRead, { upTo: older!.cursor }, tokens.vic)).data).toEqual({ markNotificationsRead: { unreadCount: 1 } });
    expect((await app.gql(markRead, { upTo: newer!.cursor }, tokens.vic)).data).toEqual({ markNotificationsRead: { unreadCount: 0 } });
    // An older cursor (another device behind this one) does not move it back.
    expect((await app.gql(markRead, { upTo: older!.cursor }, tokens.vic)).data).toEqual({ markNotificationsRead: { unreadCount: 0 } });
    page = await notificationsOf(app, tokens.vic!);
    expect(page.unreadCount).toBe(0);
    expect(page.items.map((item) => item.unread)).toEqual([false, false]);

    // Someone joining the older group raises it, unread again.
    await like(app, tokens.xia!, first);
    page = await notificationsOf(app, tokens.vic!);
    expect(page.items.map((item) => `${item.post === first ? 'first' : 'second'} ${item.unread}`)).toEqual(['first true', 'second false']);
    expect(page.unreadCount).toBe(1);
  });

  it('sinks a group back to its newest remaining event when its newest actor leaves, read again if that was read', async () => {
    const asked = await createPost(app, tokens.xia!, 'asked');
    const later = await createPost(app, tokens.xia!, 'later');
    await like(app, tokens.vic!, asked);
    const before = (await notificationsOf(app, tokens.xia!)).items.find((item) => item.post === asked)!;
    await like(app, tokens.vic!, later);
    let page = await notificationsOf(app, tokens.xia!);
    expect((await app.gql(markRead, { upTo: page.items[0]!.cursor }, tokens.xia)).errors).toBeUndefined();

    await like(app, tokens.wes!, asked);
    page = await notificationsOf(app, tokens.xia!);
    expect(page.items.map((item) => [item.post, item.unread])).toEqual([[asked, true], [later, false]]);
    await unlike(app, tokens.wes!, asked);
    page = await notificationsOf(app, tokens.xia!);
    expect(page.items.map((item) => [item.post, item.actors, item.unread])).toEqual([[later, ['vic'], false], [asked, ['vic'], false]]);
    expect(page.items[1]!.createdAt).toBe(before.createdAt);
    expect(page.unreadCount).toBe(0);
  });

  it('counts exactly up to 1,000 and shows 1,000 beyond', async () => {
    const notifications = app.database.db.collection<any>('notifications');
    const start = Date.now() - 10_000_000;
    const seeded = (count: number, offset: number) =>
      Array.from({ length: count }, (_, i) => ({
        _id: `m:${(offset + i).toString(16).padStart(24, '0')}:yan`,
        r: 'yan',
        k: 'MENTION',
        at: new Date(start + (offset + i) * 1000),
        n: 1,
        a: [{ u: 'wes', at: new Date(start + (offset + i) * 1000) }],
        v: 1,
      }));
    await notifications.insertMany(seeded(999, 0));
    expect((await notificationsOf(app, tokens.yan!, { first: 1 })).unreadCount).toBe(999);
    await notifications.insertMany(seeded(1, 999));
    expect((await notificationsOf(app, tokens.yan!, { first: 1 })).unreadCount).toBe(1000);
    await notifications.insertMany(seeded(5, 1000));
    const page = await notificationsOf(app, tokens.yan!, { first: 3 });
    expect(page.unreadCount).toBe(1000);
    // Read up to the third newest: two are left.
    expect((await app.gql(markRead, { upTo: page.items[2]!.cursor }, tokens.yan)).data).toEqual({ markNotificationsRead: { unreadCount: 2 } });
  });

  it('refuses a cursor of another list or another account, and anyone signed out', async () => {
    const post = await createPost(app, tokens.wes!, 'wes');
    await like(app, tokens.vic!, post);
    const { items } = await notificationsOf(app, tokens.wes!);
    const timelineCursor = (await app.gql('{ timeline(first: 1) { edges { cursor } } }', {}, tokens.wes)).data.timeline.edges[0].cursor;
    const codeOf = (result: any) => result.errors?.[0]?.extensions?.code;
    for (const cursor of [timelineCursor, 'garbage', items[0]!.cursor]) {
      const token = cursor === items[0]!.cursor ? tokens.vic : tokens.wes;
      expect(codeOf(await app.gql('query($after: String) { notifications(after: $after) { unreadCount } }', { after: cursor }, token))).toBe('BAD_USER_INPUT');
      expect(codeOf(await app.gql(markRead, { upTo: cursor }, token))).toBe('BAD_USER_INPUT');
    }
    expect(codeOf(await app.gql('{ notifications(first: 101) { unreadCount } }', {}, tokens.wes))).toBe('BAD_USER_INPUT');
    expect(codeOf(await app.gql('{ notifications { unreadCount } }'))).toBe('UNAUTHENTICATED');
    expect(codeOf(await app.gql(markRead, { upTo: items[0]!.cursor }))).toBe('UNAUTHENTICATED');
    // Nothing was marked read by the refused calls.
    expect((await notificationsOf(app, tokens.wes!)).unreadCount).toBe(1);
  });
});

describe('a page of 50 notifications', () => {
  let app: TestApp;
  let token: string;

  beforeAll(async () => {
    app = await startTestApp();
    token = await app.signUp('reader');
    const actors = await Promise.all(Array.from({ length: 50 }, (_, i) => app.signUp(`actor_${i}`)));
    for (let i = 0; i < 50; i++) {
      const post = await createPost(app, token, `post ${i}`);
      await like(app, actors[i]!, post);
    }
    await app.settled();
  }, 120_000);
  afterAll(() => app?.stop());

  it('costs one query per kind of hydration: actors, posts and the read marker', async () => {
    const count = (commands: CommandStartedEvent[], name: string, collection: string) =>
      commands.filter((command) => command.commandName === name && command.command[name] === collection).length;
    // A cold process: no user or post held.
    app.services.graph.invalidateAll();
    const postIds = (await app.database.db.collection('notifications').find({ r: 'reader' }).toArray()).map((doc: any) => doc.p);
    app.services.content.lookups.forgetPosts(postIds);
    let result: any;
    const commands = await app.commandsDuring(async () => {
      result = await app.gql(
        '{ notifications(first: 50) { edges { cursor node { kind actorCount actors { handle displayName } post { id text } unread createdAt } } unreadCount } }',
        {},
        token,
      );
    });
    expect(result.data.notifications.edges).toHaveLength(50);
    expect(new Set(result.data.notifications.edges.map((edge: any) => edge.node.actors[0].handle)).size).toBe(50);
    expect(result.data.notifications.unreadCount).toBe(50);
    expect(count(commands, 'find', 'notifications')).toBe(1);
    expect(count(commands, 'aggregate', 'notifications')).toBe(1); // the unread count, limited to 1,000
    expect(count(commands, 'find', 'users')).toBe(2); // the token's account, then all 50 actors in one batch
    expect(count(commands, 'find', 'content')).toBe(1);
    expect(count(commands, 'find', 'notification_markers')).toBe(1);
  });
});
