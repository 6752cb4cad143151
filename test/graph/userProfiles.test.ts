import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { heardEverything } from '../support/announcements.js';
import { startTestApp, type TestApp } from '../support/testApp.js';

const updateProfile = 'mutation($d: String, $b: String) { updateProfile(displayName: $d, bio: $b) { handle displayName bio } }';
const profileOf = '{ viewer { displayName bio } }';
const search = 'query($q: String!, $n: Int) { searchUsers(query: $q, first: $n) { handle displayName } }';
const code = (result: { errors?: { extensions?: { code?: string } }[] }) => result.errors?.[0]?.extensions?.code;

describe('profiles: display name and bio', () => {
  let a: TestApp;
  let b: TestApp;
  let token: string;

  beforeAll(async () => {
    a = await startTestApp();
    b = await startTestApp({ MONGODB_URI: a.mongodbUri });
    token = await a.signUp('uma');
  });
  afterAll(async () => {
    await b?.stop();
    await a?.stop();
  });

  it('sets, leaves (null or absent) and clears (empty string) each field', async () => {
    expect((await a.gql(updateProfile, { d: '  Uma Thurman ', b: 'Line one\nline two 🎬' }, token)).data.updateProfile).toEqual({
      handle: 'uma', displayName: 'Uma Thurman', bio: 'Line one\nline two 🎬',
    });
    expect((await a.gql(updateProfile, { d: null }, token)).data.updateProfile).toMatchObject({ displayName: 'Uma Thurman', bio: 'Line one\nline two 🎬' });
    expect((await a.gql('mutation { updateProfile(bio: "only the bio") { displayName bio } }', {}, token)).data.updateProfile).toEqual({
      displayName: 'Uma Thurman', bio: 'only the bio',
    });
    expect((await a.gql(updateProfile, { d: '', b: '   ' }, token)).data.updateProfile).toMatchObject({ displayName: null, bio: null });
    expect((await a.gql(profileOf, {}, token)).data.viewer).toEqual({ displayName: null, bio: null });
  });

  it('takes 300 graphemes of bio and refuses 301, control characters, overrides and a two-line name, storing nothing', async () => {
    await a.gql(updateProfile, { d: 'Kept', b: 'kept' }, token);
    expect(code(await a.gql(updateProfile, { b: '👩‍👩‍👧'.repeat(300) }, token))).toBeUndefined();
    const refusals = [
      { d: 'New name', b: 'x'.repeat(301) },
      { d: 'New name', b: 'bell \u0007' },
      { d: 'New name', b: 'evil \u202E' },
      { d: 'two\nlines', b: 'fine' },
      { d: 'x'.repeat(51), b: 'fine' },
    ];
    for (const variables of refusals) expect(code(await a.gql(updateProfile, variables, token))).toBe('BAD_USER_INPUT');
    expect((await a.gql(profileOf, {}, token)).data.viewer).toEqual({ displayName: 'Kept', bio: '👩‍👩‍👧'.repeat(300) });
    expect(code(await a.gql(updateProfile, { d: 'anyone' }))).toBe('UNAUTHENTICATED');
  });

  it('reaches the users another instance holds', async () => {
    await a.gql(updateProfile, { d: 'Before', b: 'before' }, token);
    const onB = () => b.gql('{ user(handle: "uma") { displayName bio } }');
    expect((await onB()).data.user).toEqual({ displayName: 'Before', bio: 'before' }); // now held by B
    await a.gql(updateProfile, { d: 'After', b: 'after' }, token);
    // Once B has heard everything A announced (however long a busy machine takes), B shows the change.
    await heardEverything(a, b);
    expect((await onB()).data.user).toEqual({ displayName: 'After', bio: 'after' });
  });
});

describe('searchUsers', () => {
  let app: TestApp;
  let token: string;
  const handles = (result: any) => result.data.searchUsers.map((user: { handle: string }) => user.handle);

  beforeAll(async () => {
    app = await startTestApp();
    token = await app.signUp('searcher');
    for (const [handle, name] of [['marta', 'Zelda Fitz'], ['martin', null], ['zed', 'Márta Übel'], ['mallory', 'MARTIAN'], ['olga', 'Olga']] as const) {
      const other = await app.signUp(handle);
      if (name) await app.gql(updateProfile, { d: name }, other);
    }
  });
  afterAll(() => app?.stop());

  it('finds handle prefixes, then display-name prefixes, whatever the case, with a leading @', async () => {
    expect(handles(await app.gql(search, { q: 'MART' }, token))).toEqual(['marta', 'martin', 'mallory']);
    expect(handles(await app.gql(search, { q: '@mar' }, token))).toEqual(['marta', 'martin', 'mallory']);
    expect(handles(await app.gql(search, { q: 'márta ü' }, token))).toEqual(['zed']);
    expect(handles(await app.gql(search, { q: 'zel' }, token))).toEqual(['marta']);
    expect(handles(await app.gql(search, { q: 'nobody' }, token))).toEqual([]);
  });

  it('follows a renamed user, and never lists a deleted account', async () => {
    const olga = await app.gql('mutation { logIn(handle: "olga", password: "correct horse battery") { token } }');
    const olgaToken = olga.data.logIn.token as string;
    await app.gql(updateProfile, { d: 'Helga' }, olgaToken);
    expect(handles(await app.gql(search, { q: 'olg' }, token))).toEqual(['olga']); // by handle still
    expect(handles(await app.gql(search, { q: 'helg' }, token))).toEqual(['olga']);
    await app.gql(updateProfile, { d: '' }, olgaToken);
    expect(handles(await app.gql(search, { q: 'helg' }, token))).toEqual([]);
    expect((await app.gql('mutation { deleteAccount(password: "correct horse battery") }', {}, olgaToken)).data).toEqual({ deleteAccount: true });
    expect(handles(await app.gql(search, { q: 'olg' }, token))).toEqual([]);
    // An account whose deletion is still under way (a large one takes a while) is gone for search at once.
    await app.database.db.collection<any>('users').updateOne({ _id: 'mallory' }, { $set: { deletedAt: new Date() } });
    expect(handles(await app.gql(search, { q: 'mar' }, token))).toEqual(['marta', 'martin']);
    await app.database.db.collection<any>('users').updateOne({ _id: 'mallory' }, { $unset: { deletedAt: '' } });
  });

  it('returns at most `first` (20 by default, 50 at most) and refuses blank queries and sizes outside 1–50', async () => {
    const bulk = Array.from({ length: 55 }, (_, i) => ({ _id: `many_${String(i).padStart(2, '0')}`, accountId: `bulk-${i}`, displayName: null, nameLower: '', passwordHash: '-', createdAt: new Date(), followerCount: 0, followingCount: 0 }));
    await app.database.db.collection<any>('users').insertMany(bulk);
    expect(handles(await app.gql(search, { q: 'many' }, token))).toHaveLength(20);
    expect(handles(await app.gql(search, { q: 'many', n: 50 }, token))).toEqual(bulk.slice(0, 50).map((user) => user._id));
    expect(handles(await app.gql(search, { q: 'many', n: 2 }, token))).toEqual(['many_00', 'many_01']);
    for (const variables of [{ q: 'many', n: 51 }, { q: 'many', n: 0 }, { q: '' }, { q: '   ' }, { q: '@' }]) {
      expect(code(await app.gql(search, variables, token))).toBe('BAD_USER_INPUT');
    }
    expect(code(await app.gql(search, { q: 'many' }))).toBe('UNAUTHENTICATED');
  });

  it('reads two index ranges, never a scan: `_id` and the lowercased display name', async () => {
    const commands = await app.commandsDuring(() => app.gql(search, { q: 'Mar' }, token));
    const finds = commands.filter((command) => command.commandName === 'find' && command.command.find === 'users' && command.command.hint);
    expect(finds.map((command) => command.command.hint)).toEqual(expect.arrayContaining([{ _id: 1 }, 'name_prefix']));
    expect(finds.map((command) => command.command.filter)).toEqual(
      expect.arrayContaining([expect.objectContaining({ _id: { $gte: 'mar', $lt: 'mas' } }), expect.objectContaining({ nameLower: { $gte: 'mar', $lt: 'mas' } })]),
    );
    const indexes = await app.database.db.collection('users').listIndexes().toArray();
    expect(indexes.find((index) => index.name === 'name_prefix')?.key).toEqual({ nameLower: 1 });
  });

  it('fills the search field of users stored before it existed, at start', async () => {
    await app.database.db.collection<any>('users').insertOne({ _id: 'oldtimer', accountId: 'old', displayName: 'Ancient One', passwordHash: '-', createdAt: new Date(), followerCount: 0, followingCount: 0 });
    expect(handles(await app.gql(search, { q: 'ancient' }, token))).toEqual([]);
    await app.services.profiles.ensureIndexes(); // what every start runs
    expect(handles(await app.gql(search, { q: 'ancient' }, token))).toEqual(['oldtimer']);
  });
});
