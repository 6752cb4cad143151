import { ObjectId, type CommandStartedEvent } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requestCommands, startTestApp, type TestApp } from '../support/testApp.js';
import { internalId } from '../support/ids.js';

const pageQuery = `query($id: ID!) { list(id: $id) { timeline(first: 20) { edges { node { text author { handle } } } pageInfo { hasNextPage } } } }`;
const finds = (commands: CommandStartedEvent[], collection: string) =>
  commands.filter((command) => command.commandName === 'find' && command.command.find === collection);

describe('a page of a 5,000-member list', () => {
  let app: TestApp;
  let token: string;
  let bigList: string;
  let smallList: string;
  const members = Array.from({ length: 5000 }, (_, i) => `member_${String(i).padStart(4, '0')}`);
  const posters = members.filter((_, i) => i % 100 === 7);

  beforeAll(async () => {
    app = await startTestApp();
    token = await app.signUp('owner');
    const create = async (name: string) => (await app.gql('mutation($n: String!) { createList(name: $n) { id } }', { n: name }, token)).data.createList.id as string;
    bigList = await create('everyone');
    smallList = await create('three');
    const db = app.database.db;
    // The documented layout written directly: 5,000 sign-ups and follows through the API would be
    // 5,000 password hashes. Each follow edge carries the lists that hold the followee.
    const now = new Date();
    await db.collection('users').insertMany(
      members.map((handle) => ({ _id: handle as never, accountId: handle, displayName: null, passwordHash: '-', createdAt: now, readAt: now, followerCount: 1, followingCount: 0 })),
    );
    const listsOf = (i: number) => (i < 3 ? [internalId(bigList), internalId(smallList)] : [internalId(bigList)]);
    await db.collection('following').insertMany(members.map((handle, i) => ({ _f: 'owner', _t: handle, _g: listsOf(i) })));
    await db.collection('followers').insertMany(members.map((handle) => ({ _f: handle, _t: 'owner' })));
    await db.collection('users').updateOne({ _id: 'owner' as never }, { $set: { followingCount: members.length } });
    for (const handle of posters) await app.services.feed.post(handle, `hello from ${handle}`);
    for (const handle of members.slice(0, 3)) await app.services.feed.post(handle, `small list, ${handle}`);
    await app.settled();
    app.services.graph.invalidateAll();
  }, 300_000);
  afterAll(() => app?.stop());

  it('is its members’ 20 newest posts, and costs one content query once the list is held', async () => {
    const expected = (await app.database.db.collection('content').find({ _a: { $in: members } }).toArray())
      .sort((a, b) => b._d.getTime() - a._d.getTime() || b._id.toHexString().localeCompare(a._id.toHexString()))
      .slice(0, 20)
      .map((doc) => doc._m);
    let page: any;
    const cold = await app.commandsDuring(async () => {
      page = await app.gql(pageQuery, { id: bigList }, token);
    });
    expect(page.data.list.timeline.edges.map((edge: any) => edge.node.text)).toEqual(expected);
    expect(page.data.list.timeline.pageInfo.hasNextPage).toBe(true);
    // Cold: the list and its members are read once, by the index of the list's own edges.
    expect(finds(cold, 'lists')).toHaveLength(1);
    expect(finds(cold, 'following').map((command) => command.command.filter._g)).toEqual([internalId(bigList)]);

    const warm = requestCommands(
      await app.warmCommandsDuring(() => app.gql(pageQuery, { id: bigList }, token), ['lists', 'following', 'users', 'reader_filters']),
    );
    // One query per page, as the home timeline of a reader following 5,000 accounts costs: the members' posts.
    expect(warm.map((command) => `${command.commandName} ${command.command[command.commandName]}`)).toEqual(['find content']);
    expect(warm[0]!.command.filter._a.$in).toHaveLength(5000);
  });

  it('costs by the list’s size, not by whom the owner follows', async () => {
    const commands = await app.commandsDuring(() => app.gql(pageQuery, { id: smallList }, token));
    // Never the owner's 5,000 follows: only the list's own members are read.
    for (const command of finds(commands, 'following')) expect(command.command.filter._g).toEqual(internalId(smallList));
    for (const command of finds(commands, 'content')) expect(command.command.filter._a.$in).toHaveLength(3);
    const page = await app.gql(pageQuery, { id: smallList }, token);
    expect(page.data.list.timeline.edges.map((edge: any) => edge.node.text).sort()).toEqual(
      members.slice(0, 3).map((handle) => `small list, ${handle}`).concat(members.slice(0, 3).filter((h) => posters.includes(h)).map((h) => `hello from ${h}`)).sort(),
    );
  });
});
