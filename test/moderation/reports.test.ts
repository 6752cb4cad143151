import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answersAs, startTestApp, type TestApp } from '../support/testApp.js';

const reportMutation = `mutation($h: String!, $p: ID, $r: ReportReason!, $c: String) {
  report(handle: $h, postId: $p, reason: $r, comment: $c) { id reason comment state resolution reporter { handle } account { handle } post { id text } }
}`;
const reportsQuery = `query($state: ReportState, $first: Int, $after: String) {
  reports(state: $state, first: $first, after: $after) {
    edges { cursor node { id reason comment state resolution reporter { handle } account { handle } post { id text visibility } } }
    pageInfo { hasNextPage endCursor }
  }
}`;
const resolveMutation = `mutation($id: ID!, $a: ModerationAction!) { resolveReport(id: $id, action: $a) { id state resolution } }`;

describe('reports, staff and the audit log', () => {
  let app: TestApp;
  const tokens: Record<string, string> = {};
  const ok = answersAs(() => app, tokens);
  const codeOf = async (handle: string | null, query: string, variables: Record<string, unknown> = {}) =>
    (await app.gql(query, variables, handle ? tokens[handle] : undefined)).errors?.[0]?.extensions?.code;
  const audit = () => app.database.db.collection<any>('audit_log').find().sort({ at: 1 }).toArray();
  let hidden: string;
  let open: string;

  beforeAll(async () => {
    app = await startTestApp({ STAFF_HANDLES: 'mod', RATE_LIMIT_REPORTS_PER_HOUR: '6' });
    for (const handle of ['mod', 'rita', 'troll', 'vic', 'granted']) tokens[handle] = await app.signUp(handle);
    open = (await ok('troll', 'mutation { createPost(text: "buy my stuff") { id } }')).createPost.id;
    hidden = (await ok('troll', 'mutation { createPost(text: "for my followers", visibility: FOLLOWERS) { id } }')).createPost.id;
  });
  afterAll(() => app?.stop());

  it('takes a report of an account or a visible post, once while open, and never shows the reporter to non-staff', async () => {
    const first = (await ok('rita', reportMutation, { h: 'troll', p: open, r: 'SPAM', c: '  selling  ' })).report;
    expect(first).toMatchObject({ reason: 'SPAM', comment: 'selling', state: 'OPEN', resolution: null, reporter: null, account: { handle: 'troll' }, post: { id: open } });
    // Again while open: the same report, whatever the reason given now.
    expect((await ok('rita', reportMutation, { h: 'troll', p: open, r: 'ABUSE' })).report.id).toBe(first.id);
    // The account itself is another target.
    const ofAccount = (await ok('rita', reportMutation, { h: 'troll', r: 'ABUSE' })).report;
    expect(ofAccount.id).not.toBe(first.id);
    expect(ofAccount.post).toBeNull();
    // The reported account learns nothing: no notification, no way to list reports.
    await app.settled();
    expect((await ok('troll', '{ notifications { edges { node { kind } } } }')).notifications.edges).toEqual([]);
    expect(await codeOf('troll', reportsQuery)).toBe('FORBIDDEN');
  });

  it('refuses bad input without writing anything', async () => {
    const before = await app.database.db.collection('reports').countDocuments();
    expect(await codeOf('rita', reportMutation, { h: 'nobody_here', r: 'SPAM' })).toBe('NOT_FOUND');
    expect(await codeOf('rita', reportMutation, { h: 'troll', p: hidden, r: 'SPAM' })).toBe('NOT_FOUND'); // not visible to rita
    expect(await codeOf('rita', reportMutation, { h: 'vic', p: open, r: 'SPAM' })).toBe('NOT_FOUND'); // not vic's post
    expect(await codeOf('rita', reportMutation, { h: 'troll', r: 'SPAM', c: 'x'.repeat(1001) })).toBe('BAD_USER_INPUT');
    expect(await codeOf('rita', reportMutation, { h: 'troll', r: 'SPAM', c: 'bad \u0007 bell' })).toBe('BAD_USER_INPUT');
    expect(await codeOf('rita', reportMutation, { h: 'rita', r: 'SPAM' })).toBe('BAD_USER_INPUT');
    expect(await codeOf(null, reportMutation, { h: 'troll', r: 'SPAM' })).toBe('UNAUTHENTICATED');
    expect(await app.database.db.collection('reports').countDocuments()).toBe(before);
    // 1,000 characters is allowed.
    expect((await ok('vic', reportMutation, { h: 'troll', r: 'OTHER', c: 'y'.repeat(1000) })).report.comment).toHaveLength(1000);
  });

  it('rate limits new reports, not the repeated ones', async () => {
    for (const handle of ['mod', 'granted']) await ok('vic', reportMutation, { h: handle, r: 'OTHER' });
    // vic has made 3 of 6; three more new targets pass, the seventh is refused.
    const posts = [];
    for (let i = 0; i < 4; i++) posts.push((await ok('rita', `mutation { createPost(text: "post ${i}") { id } }`)).createPost.id);
    for (const post of posts.slice(0, 3)) await ok('vic', reportMutation, { h: 'rita', p: post, r: 'OTHER' });
    expect(await codeOf('vic', reportMutation, { h: 'rita', p: posts[3], r: 'OTHER' })).toBe('RATE_LIMITED');
    // An open report asked again still answers.
    expect((await app.gql(reportMutation, { h: 'troll', r: 'OTHER' }, tokens.vic)).errors).toBeUndefined();
  });

  it('lets only staff list and resolve reports; staff see the reporter and a post its visibility hides', async () => {
    expect(await codeOf('rita', resolveMutation, { id: 'VTo1ZjAwMDAwMDAwMDAwMDAwMDAwMDAwMDA', a: 'DISMISS' })).toBe('FORBIDDEN');
    // A follower of troll reports the followers-only post; staff, who do not follow troll, see it.
    await ok('granted', 'mutation { follow(handle: "troll") { handle } }');
    await ok('granted', reportMutation, { h: 'troll', p: hidden, r: 'ILLEGAL' });
    const listed = (await ok('mod', reportsQuery, { state: 'OPEN', first: 100 })).reports.edges.map((edge: any) => edge.node);
    const ofHidden = listed.find((report: any) => report.post?.id === hidden);
    expect(ofHidden).toMatchObject({ reporter: { handle: 'granted' }, post: { visibility: 'FOLLOWERS', text: 'for my followers' } });
    // Oldest first, all open; paged.
    expect(listed[0]).toMatchObject({ reporter: { handle: 'rita' }, reason: 'SPAM' });
    const page = (await ok('mod', reportsQuery, { first: 2 })).reports;
    const next = (await ok('mod', reportsQuery, { first: 2, after: page.pageInfo.endCursor })).reports;
    expect(next.edges[0].node.id).toBe(listed[2].id);
    // node() answers staff only.
    const asNode = `query($id: ID!) { node(id: $id) { ... on Report { reason } } }`;
    expect((await ok('mod', asNode, { id: ofHidden.id })).node).toEqual({ reason: 'ILLEGAL' });
    expect((await ok('granted', asNode, { id: ofHidden.id })).node).toBeNull();
  });

  it('dismisses a report, written to the audit log; a new report of the target can then be made', async () => {
    const target = (await ok('mod', reportsQuery, { state: 'OPEN', first: 100 })).reports.edges.find((edge: any) => edge.node.account.handle === 'mod')!.node;
    expect((await ok('mod', resolveMutation, { id: target.id, a: 'DISMISS' })).resolveReport).toMatchObject({ state: 'RESOLVED', resolution: 'DISMISS' });
    // Repeating the same action answers the same report; another action on it is a conflict.
    expect((await ok('mod', resolveMutation, { id: target.id, a: 'DISMISS' })).resolveReport.state).toBe('RESOLVED');
    expect(await codeOf('mod', resolveMutation, { id: target.id, a: 'REMOVE_POST' })).toBe('CONFLICT');
    const entries = await audit();
    expect(entries.filter((entry) => entry.what === 'RESOLVE_REPORT')).toHaveLength(1);
    expect(entries.at(-1)).toMatchObject({ who: 'mod', what: 'RESOLVE_REPORT', action: 'DISMISS', account: 'mod' });
    expect(entries.at(-1)!.report.toHexString()).toBeTruthy();
    expect((await ok('mod', reportsQuery, { state: 'RESOLVED' })).reports.edges.map((edge: any) => edge.node.id)).toEqual([target.id]);
    // Nothing in the API changes the log: no mutation names it.
    const mutations = (await ok('mod', '{ __type(name: "Mutation") { fields { name } } }')).__type.fields.map((field: any) => field.name);
    expect(mutations.filter((name: string) => /audit/i.test(name))).toEqual([]);
  });

  it('grants staff through `npm run staff -- grant`, recorded in the audit log', async () => {
    expect(await codeOf('granted', reportsQuery)).toBe('FORBIDDEN');
    const run = (...args: string[]) =>
      promisify(execFile)('node', ['--import', 'tsx/esm', 'src/main.ts', 'staff', ...args], { env: { ...process.env, MONGODB_URI: app.mongodbUri, STAFF_HANDLES: 'mod', LOG_LEVEL: 'warn' } });
    expect((await run('grant', 'granted')).stdout).toContain('granted is now staff');
    // Other processes learn it through the change bus.
    for (let waited = 0; (await codeOf('granted', reportsQuery)) === 'FORBIDDEN'; waited += 50) {
      if (waited > 5000) throw new Error('the grant did not reach this process');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect((await audit()).at(-1)).toMatchObject({ who: 'command line', what: 'GRANT_STAFF', account: 'granted' });
    expect((await run('list')).stdout).toMatch(/staff by STAFF_HANDLES\s+mod\nstaff granted\s+granted/);
    await run('revoke', 'granted');
    for (let waited = 0; (await codeOf('granted', reportsQuery)) !== 'FORBIDDEN'; waited += 50) {
      if (waited > 5000) throw new Error('the revocation did not reach this process');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }, 60_000);
});
