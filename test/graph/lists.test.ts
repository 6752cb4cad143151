import { ObjectId } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/testApp.js';
import { apiListId, internalHex, internalId } from '../support/ids.js';

const password = 'correct horse battery';
const listFields = 'id name memberCount members(first: 100) { totalCount edges { node { handle } } }';

describe('lists', () => {
  let app: TestApp;
  const tokens: Record<string, string> = {};
  const gql = (handle: string, query: string, variables: Record<string, unknown> = {}) => app.gql(query, variables, tokens[handle]);
  const ok = async (handle: string, query: string, variables: Record<string, unknown> = {}) => {
    const result = await gql(handle, query, variables);
    if (result.errors) throw new Error(JSON.stringify(result.errors));
    return result.data;
  };
  const code = async (handle: string, query: string, variables: Record<string, unknown> = {}) => {
    const result = await gql(handle, query, variables);
    expect(result.data ?? null).toBeNull();
    return result.errors?.[0]?.extensions?.code;
  };
  const create = async (handle: string, name: string): Promise<string> =>
    (await ok(handle, 'mutation($n: String!) { createList(name: $n) { id } }', { n: name })).createList.id;
  const add = (handle: string, id: string, member: string) =>
    gql(handle, `mutation($id: ID!, $h: String!) { addToList(id: $id, handle: $h) { ${listFields} } }`, { id, h: member });
  const remove = (handle: string, id: string, member: string) =>
    gql(handle, `mutation($id: ID!, $h: String!) { removeFromList(id: $id, handle: $h) { ${listFields} } }`, { id, h: member });
  const follow = (handle: string, other: string, field = 'follow') => ok(handle, `mutation($h: String!) { ${field}(handle: $h) { handle } }`, { h: other });
  const list = async (handle: string, id: string) => (await ok(handle, `query($id: ID!) { list(id: $id) { ${listFields} } }`, { id })).list;
  const members = async (handle: string, id: string) => {
    const shown = await list(handle, id);
    return shown ? { count: shown.memberCount, total: shown.members.totalCount, handles: shown.members.edges.map((e: any) => e.node.handle) } : null;
  };
  /** Whatever the API says, the stored memberships: every one must be on an edge of someone the owner follows. */
  const storedMembers = async (id: string) =>
    (await app.database.db.collection('following').find({ _g: internalId(id) }).toArray()).map((edge) => `${edge._f}>${edge._t}`).sort();

  /** The owner follows these four again, whatever a test before left. */
  const followAll = async () => {
    for (const other of ['ann', 'ben', 'cat', 'dan']) await follow('owner', other);
  };

  beforeAll(async () => {
    app = await startTestApp();
    for (const handle of ['owner', 'ann', 'ben', 'cat', 'dan', 'eve', 'nosy']) tokens[handle] = await app.signUp(handle);
    await followAll();
  });
  afterAll(() => app?.stop());

  it('creates, renames, lists and deletes lists, private to their owner', async () => {
    const id = await create('owner', '  Friends  ');
    expect(await list('owner', id)).toMatchObject({ id, name: 'Friends', memberCount: 0 });
    const renamed = await ok('owner', 'mutation($id: ID!) { renameList(id: $id, name: "Close friends") { id name } }', { id });
    expect(renamed.renameList).toEqual({ id, name: 'Close friends' });
    expect((await ok('owner', '{ lists { id name } }')).lists).toContainEqual({ id, name: 'Close friends' });

    // Another account sees nothing of it and can change nothing.
    expect(await list('nosy', id)).toBeNull();
    expect((await ok('nosy', '{ lists { id } }')).lists).toEqual([]);
    expect(await code('nosy', 'mutation($id: ID!) { renameList(id: $id, name: "mine") { id } }', { id })).toBe('NOT_FOUND');
    expect(await code('nosy', 'mutation($id: ID!) { deleteList(id: $id) }', { id })).toBe('NOT_FOUND');
    expect((await add('nosy', id, 'ann')).errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    expect((await remove('nosy', id, 'ann')).errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    expect(await list('owner', id)).toMatchObject({ name: 'Close friends' });

    expect((await ok('owner', 'mutation($id: ID!) { deleteList(id: $id) }', { id })).deleteList).toBe(true);
    expect(await list('owner', id)).toBeNull();
    expect(await code('owner', 'mutation($id: ID!) { deleteList(id: $id) }', { id })).toBe('NOT_FOUND');
    expect(await code('owner', 'mutation { deleteList(id: "not-an-id") }')).toBe('NOT_FOUND');
    expect(await list('owner', 'not-an-id')).toBeNull();
    expect((await ok('owner', '{ lists { id } }')).lists).not.toContainEqual({ id });
    expect(await app.database.db.collection('lists').countDocuments({ _id: internalId(id) })).toBe(0);
  });

  it('costs every list a response may hold: fifty timelines of a hundred posts are over the budget', async () => {
    const big = await gql('owner', '{ lists { timeline(first: 100) { edges { node { text author { handle } } } } } }');
    expect(big.errors?.[0]?.extensions?.code).toBe('QUERY_TOO_COMPLEX');
    expect((await gql('owner', '{ lists { name timeline(first: 20) { edges { cursor } } } }')).errors).toBeUndefined();
  });

  it('needs a name of 1 to 50 characters as a person counts them, on one line', async () => {
    const bad = ['', '   ', 'x'.repeat(51), 'two\nlines', 'a\u202Eb'];
    for (const name of bad) {
      expect(await code('eve', 'mutation($n: String!) { createList(name: $n) { id } }', { n: name }), JSON.stringify(name)).toBe('BAD_USER_INPUT');
    }
    // 50 flags are 100 code points but 50 characters.
    const flags = '🇫🇷'.repeat(50);
    const id = await create('eve', flags);
    expect((await list('eve', id)).name).toBe(flags);
    expect(await code('eve', 'mutation($id: ID!, $n: String!) { renameList(id: $id, name: $n) { id } }', { id, n: `${flags}🇫🇷` })).toBe('BAD_USER_INPUT');
    expect((await list('eve', id)).name).toBe(flags);
  });

  it('allows 50 lists per account, also when the 51st and 52nd are asked for at once', async () => {
    const before = (await ok('dan', '{ lists { id } }')).lists.length;
    await Promise.all(Array.from({ length: 48 - before }, (_, i) => create('dan', `list ${i}`)));
    const racing = await Promise.all(
      Array.from({ length: 6 }, (_, i) => gql('dan', 'mutation($n: String!) { createList(name: $n) { id } }', { n: `racing ${i}` })),
    );
    expect(racing.filter((result) => result.data?.createList).length).toBe(2);
    expect(racing.filter((result) => result.errors?.[0]?.extensions?.code === 'BAD_USER_INPUT').length).toBe(4);
    const lists = (await ok('dan', '{ lists { id } }')).lists;
    expect(lists).toHaveLength(50);
    // Deleting one frees its place.
    await ok('dan', 'mutation($id: ID!) { deleteList(id: $id) }', { id: lists[0].id });
    await create('dan', 'one more');
    expect(await code('dan', 'mutation { createList(name: "too many") { id } }')).toBe('BAD_USER_INPUT');
  });

  it('holds only accounts the owner follows, with an exact count, and says why not', async () => {
    const id = await create('owner', 'members');
    expect((await add('owner', id, 'ann')).data.addToList).toMatchObject({ memberCount: 1, members: { totalCount: 1 } });
    await add('owner', id, 'ben');
    await add('owner', id, 'ann'); // again: nothing changes
    expect(await members('owner', id)).toEqual({ count: 2, total: 2, handles: ['ann', 'ben'] });

    expect((await add('owner', id, 'eve')).errors?.[0]?.extensions?.code).toBe('FORBIDDEN'); // not followed
    expect((await add('owner', id, 'owner')).errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect((await add('owner', id, 'nobody_here')).errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    expect((await add('owner', id, 'Not A Handle')).errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    expect((await remove('owner', id, 'nobody_here')).errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    expect((await add('owner', apiListId(new ObjectId()), 'ann')).errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    expect(await members('owner', id)).toEqual({ count: 2, total: 2, handles: ['ann', 'ben'] });

    expect((await remove('owner', id, 'ann')).data.removeFromList.memberCount).toBe(1);
    expect((await remove('owner', id, 'ann')).data.removeFromList.memberCount).toBe(1); // idempotent
    expect((await remove('owner', id, 'cat')).data.removeFromList.memberCount).toBe(1); // never a member
    expect(await members('owner', id)).toEqual({ count: 1, total: 1, handles: ['ben'] });

    // Members page by handle.
    await add('owner', id, 'cat');
    await add('owner', id, 'dan');
    const first = (await ok('owner', '{ lists { id members(first: 2) { edges { node { handle } } pageInfo { hasNextPage endCursor } } } }')).lists.find(
      (shown: any) => shown.id === id,
    ).members;
    expect(first.edges.map((e: any) => e.node.handle)).toEqual(['ben', 'cat']);
    expect(first.pageInfo.hasNextPage).toBe(true);
    const next = (await ok('owner', `query($id: ID!, $after: String) { list(id: $id) { members(first: 2, after: $after) { edges { node { handle } } pageInfo { hasNextPage } } } }`, { id, after: first.pageInfo.endCursor })).list.members;
    expect(next).toEqual({ edges: [{ node: { handle: 'dan' } }], pageInfo: { hasNextPage: false } });
  });

  it('orders members by handle whatever other lists hold them', async () => {
    await followAll();
    const older = await create('owner', 'older');
    const newer = await create('owner', 'newer');
    await add('owner', older, 'ben');
    for (const member of ['dan', 'cat', 'ben', 'ann']) await add('owner', newer, member);
    expect(await members('owner', newer)).toEqual({ count: 4, total: 4, handles: ['ann', 'ben', 'cat', 'dan'] });
  });

  it('loses a member the owner unfollows or blocks, from every list, and does not bring them back on a new follow', async () => {
    const one = await create('owner', 'one');
    const two = await create('owner', 'two');
    for (const id of [one, two]) for (const member of ['ann', 'ben', 'cat']) await add('owner', id, member);
    await follow('owner', 'ann', 'unfollow');
    await ok('owner', 'mutation { block(handle: "ben") { handle } }');
    for (const id of [one, two]) expect(await members('owner', id)).toEqual({ count: 1, total: 1, handles: ['cat'] });
    // Blocked the other way round too.
    await ok('cat', 'mutation { block(handle: "owner") { handle } }');
    for (const id of [one, two]) expect(await members('owner', id)).toEqual({ count: 0, total: 0, handles: [] });

    await ok('owner', 'mutation { unblock(handle: "ben") { handle } }');
    await ok('cat', 'mutation { unblock(handle: "owner") { handle } }');
    for (const other of ['ann', 'ben', 'cat']) await follow('owner', other);
    expect(await members('owner', one)).toEqual({ count: 0, total: 0, handles: [] });
    expect(await storedMembers(one)).toEqual([]);
  });

  it('never keeps a member the owner no longer follows, however adding, removing, unfollowing and deleting race', async () => {
    const id = await create('owner', 'churn');
    const other = await create('owner', 'churn, deleted');
    for (let round = 0; round < 6; round++) {
      await Promise.all([
        ...['ann', 'ben'].map((member) => add('owner', id, member)),
        ...['ann', 'ben'].map((member) => add('owner', other, member)),
        follow('owner', 'ann', 'unfollow'),
        remove('owner', id, 'ben'),
        follow('owner', 'ben', 'unfollow'),
        round === 3 ? gql('owner', 'mutation($id: ID!) { deleteList(id: $id) }', { id: other }) : Promise.resolve(),
        follow('owner', 'ann'),
        follow('owner', 'ben'),
      ]);
      const following = new Set((await app.database.db.collection('following').find({ _f: 'owner' }).toArray()).map((edge) => edge._t));
      const shown = await members('owner', id);
      expect(shown!.handles.every((member: string) => following.has(member))).toBe(true);
      expect(shown!.count).toBe(shown!.handles.length);
    }
    expect(await storedMembers(other)).toEqual([]);
  });

  it('refuses an add that an unfollow overtakes, and loses a member whose unfollow comes right after the add', async () => {
    const id = await create('owner', 'forced');
    const following = app.database.db.collection('following');
    const edges = (app.services.graph.lists as any).following;
    const updateOne = edges.updateOne;
    try {
      // The unfollow lands between the add's list check and its write.
      edges.updateOne = async (...args: any[]) => {
        edges.updateOne = updateOne;
        await follow('owner', 'dan', 'unfollow');
        return updateOne.apply(edges, args);
      };
      expect((await add('owner', id, 'dan')).errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
      expect(await storedMembers(id)).toEqual([]);
      await follow('owner', 'dan');

      // The unfollow lands right after the add's write.
      edges.updateOne = async (...args: any[]) => {
        edges.updateOne = updateOne;
        const written = await updateOne.apply(edges, args);
        await follow('owner', 'dan', 'unfollow');
        return written;
      };
      await add('owner', id, 'dan');
      expect(await members('owner', id)).toEqual({ count: 0, total: 0, handles: [] });
      expect(await following.countDocuments({ _g: internalId(id) })).toBe(0);
    } finally {
      edges.updateOne = updateOne;
      await follow('owner', 'dan');
    }
  });

  it('takes an add back when the list is deleted between its check and its write', async () => {
    await followAll();
    const id = await create('owner', 'deleted meanwhile');
    const edges = (app.services.graph.lists as any).following;
    const updateOne = edges.updateOne;
    try {
      edges.updateOne = async (...args: any[]) => {
        edges.updateOne = updateOne;
        await ok('owner', 'mutation($id: ID!) { deleteList(id: $id) }', { id });
        return updateOne.apply(edges, args);
      };
      expect((await add('owner', id, 'ann')).errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    } finally {
      edges.updateOne = updateOne;
    }
    expect(await storedMembers(id)).toEqual([]);
  });

  it('finishes a deletion whose request died: memberships and the place are freed by the repair sweep', async () => {
    await followAll();
    const id = await create('owner', 'died while deleting');
    await add('owner', id, 'cat');
    // What a request killed right after marking the list leaves.
    await app.database.db.collection('lists').updateOne({ _id: internalId(id) }, { $set: { deletingAt: new Date(Date.now() - 60_000) } });
    expect(await list('owner', id)).toBeNull();
    expect((await add('owner', id, 'ben')).errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    // The workers' own sweep (every second) may finish it first; after one more pass it is done either way.
    await app.services.feed.repairStalled();
    expect(await storedMembers(id)).toEqual([]);
    expect(await app.database.db.collection('lists').countDocuments({ _id: internalId(id) })).toBe(0);
  });

  it("removes a deleted account's lists, and the deleted account from others' lists", async () => {
    await followAll();
    tokens.leaver = await app.signUp('leaver');
    await follow('leaver', 'ann');
    const leaversList = await create('leaver', 'mine');
    await add('leaver', leaversList, 'ann');
    await follow('owner', 'leaver');
    const ownersList = await create('owner', 'with leaver');
    await add('owner', ownersList, 'leaver');
    await add('owner', ownersList, 'ann');

    expect(await ok('leaver', `mutation { deleteAccount(password: "${password}") }`)).toEqual({ deleteAccount: true });
    await app.settled();
    expect(await app.database.db.collection('lists').countDocuments({ _o: 'leaver' })).toBe(0);
    expect(await storedMembers(leaversList)).toEqual([]);
    expect(await members('owner', ownersList)).toEqual({ count: 1, total: 1, handles: ['ann'] });
  });
});
