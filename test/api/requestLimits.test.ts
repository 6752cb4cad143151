import { isObjectType, Kind, parse, type OperationDefinitionNode } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operationCost } from '../../src/api/requestLimits.js';
import { buildSchema } from '../../src/api/schema.js';
import { liveClient, runOverWebSocket } from '../live/liveClient.js';
import { startTestApp, type TestApp } from '../support/testApp.js';

/**
 * A page size given with `last:` fetches as many posts as one given with `first:`, so it must cost
 * as much. Every field of the schema that takes `last` is checked, found from the schema itself, so
 * a connection added later is covered without a change here.
 */
describe('the cost of a page asked for with last', () => {
  const schema = buildSchema();
  const costOf = (query: string, variables: Record<string, unknown> = {}) => {
    const document = parse(query);
    const operation = document.definitions.find((definition): definition is OperationDefinitionNode => definition.kind === Kind.OPERATION_DEFINITION)!;
    return operationCost(schema, document, operation, variables);
  };
  const takingLast = Object.values(schema.getTypeMap())
    .filter(isObjectType)
    .flatMap((type) => Object.values(type.getFields()).filter((field) => field.args.some((arg) => arg.name === 'last')).map((field) => ({ type: type.name, field: field.name, name: `${type.name}.${field.name}` })));

  it('finds every connection that pages both ways', () => {
    expect(takingLast).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ name: 'Query.timeline' }),
        expect.objectContaining({ name: 'List.timeline' }),
        expect.objectContaining({ name: 'User.posts' }),
      ]),
    );
  });

  it.each(takingLast)('prices $name(last: n) like $name(first: n), literal or variable', ({ type, field }) => {
    // A fragment on the field's type: costed by its type condition, wherever the field sits.
    const page = (args: string) => `query($n: Int) { ...F } fragment F on ${type} { ${field}${args ? `(${args})` : ''} { edges { cursor node { id text } } } }`;
    const byFirst = costOf(page('first: 100'));
    expect(byFirst).toBeGreaterThan(costOf(page(''))); // 100 is more than the default page
    expect(costOf(page('last: 100'))).toBe(byFirst);
    expect(costOf(page('last: 100, before: "c"'))).toBe(byFirst);
    expect(costOf(page('last: $n'), { n: 100 })).toBe(byFirst);
    expect(costOf(page('last: 7'))).toBe(costOf(page('first: 7')));
  });
});

/** Fragments only name what is selected: wrapping a selection in one changes nothing of its cost. */
describe('the cost of what fragments select', () => {
  const schema = buildSchema();
  const costOf = (query: string) => {
    const document = parse(query);
    const operation = document.definitions.find((definition): definition is OperationDefinitionNode => definition.kind === Kind.OPERATION_DEFINITION)!;
    return operationCost(schema, document, operation, {});
  };
  const followersOfFollowers = 'user(handle: "a") { followers(first: 100) { edges { node { followers(first: 100) { totalCount } } } } }';

  it('prices a selection inside an inline fragment or a named one as it prices the selection itself', () => {
    const plain = costOf(`{ ${followersOfFollowers} }`);
    expect(plain).toBeGreaterThan(10_000);
    expect(costOf(`{ ... on Query { ${followersOfFollowers} } }`)).toBe(plain);
    expect(costOf(`{ ... { ${followersOfFollowers} } }`)).toBe(plain);
    expect(costOf(`{ ...F } fragment F on Query { ${followersOfFollowers} }`)).toBe(plain);
    expect(costOf('{ user(handle: "a") { followers(first: 100) { edges { node { ... on User { followers(first: 100) { totalCount } } } } } } }')).toBe(plain);
  });

  it('prices every spread of a named fragment, not only the first', () => {
    const plain = costOf(`{ ${followersOfFollowers} }`);
    // Worked out once and reused: the second spread costs what the first did.
    expect(costOf(`{ a: user(handle: "a") { ...F } b: user(handle: "b") { ...F } } fragment F on User { followers(first: 100) { edges { node { followers(first: 100) { totalCount } } } } }`)).toBe(2 * plain);
    expect(costOf(`{ user(handle: "a") { followers(first: 100) { edges { node { ...F } } } following(first: 100) { edges { node { ...F } } } } } fragment F on User { followers(first: 100) { totalCount } }`)).toBe(2 * plain - 1);
  });
});

/** What one request may cost, checked before anything runs (see README, "Limits"). */
describe('request limits', () => {
  let app: TestApp;
  let token: string;
  const codeOf = (result: { errors?: { extensions?: { code?: string } }[] }) => result.errors?.[0]?.extensions?.code;

  beforeAll(async () => {
    app = await startTestApp();
    token = await app.signUp('limits');
  });
  afterAll(() => app?.stop());

  it('answers a document whose fragments spread each other exponentially with a validation error, at once', async () => {
    // 24 levels, each fragment spreading the next twice: 2^24 paths if fragments were expanded.
    const levels = 24;
    const fragments = Array.from({ length: levels }, (_, i) =>
      i === levels - 1 ? `fragment F${i} on User { handle }` : `fragment F${i} on User { followers { edges { node { ...F${i + 1} ...F${i + 1} } } } }`,
    );
    const result = await app.gql(`{ user(handle: "limits") { ...F0 } } ${fragments.join(' ')}`);
    expect(result.status).toBe(400);
    expect(codeOf(result)).toBe('GRAPHQL_VALIDATION_FAILED');
    expect(result.errors?.[0]?.message).toMatch(/depth limit of 10 exceeded/);
  });

  it('counts the depth of fields, not of the fragments that hold them, as components nest their fragments', async () => {
    // Ten fields deep, in four fragments: at the limit of 10; one more field is over it.
    const fragments =
      'fragment A on User { posts(first: 2) { edges { ...B } } } fragment B on PostEdge { node { ...C } } ' +
      'fragment C on Post { replyTo { author { ...D } } } fragment D on User { posts(first: 2) { edges { node { text } } } }';
    const within = await app.gql(`{ user(handle: "limits") { ...A } } ${fragments}`, {}, token);
    expect(within.errors).toBeUndefined();
    const over = await app.gql(`{ user(handle: "limits") { ...A } } ${fragments.replace('{ text }', '{ replyTo { id } }')}`, {}, token);
    expect(over.errors?.[0]?.message).toMatch(/depth limit of 10 exceeded, found 11/);
  });

  it.each([
    ['a fragment cycle', '{ viewer { ...A } } fragment A on User { followers { edges { node { ...B } } } } fragment B on User { ...A }'],
    ['an unknown fragment', '{ viewer { ...Missing } }'],
  ])('refuses %s with 400 GRAPHQL_VALIDATION_FAILED, not a server error', async (_case, query) => {
    const result = await app.gql(query);
    expect(result.status).toBe(400);
    expect(codeOf(result)).toBe('GRAPHQL_VALIDATION_FAILED');
    expect(JSON.stringify(result)).not.toContain('stacktrace');
  });

  it('refuses nested lists over the cost budget before running them, with the cost and the limit', async () => {
    const nested = '{ user(handle: "limits") { followers(first: 100) { edges { node { followers(first: 100) { edges { node { following(first: 100) { totalCount } } } } } } } } }';
    const anonymous = await app.gql(nested);
    expect(anonymous.status).toBe(400);
    expect(anonymous.errors?.[0]?.extensions).toMatchObject({ code: 'QUERY_TOO_COMPLEX', limit: 1000 });
    expect(anonymous.errors?.[0]?.extensions?.cost).toBeGreaterThan(1_000_000);
    const signedIn = await app.gql(nested, {}, token);
    expect(signedIn.errors?.[0]?.extensions).toMatchObject({ code: 'QUERY_TOO_COMPLEX', limit: 5000 });

    // Page sizes given through variables count the same.
    const viaVariables = await app.gql(
      'query($n: Int) { timeline(first: $n) { edges { node { author { followers(first: $n) { edges { cursor } } } } } } }',
      { n: 100 },
      token,
    );
    expect(codeOf(viaVariables)).toBe('QUERY_TOO_COMPLEX');
  });

  it('tells a client asking for too large a page the largest it may ask for, not that its query is too complex', async () => {
    // Priced at the page the server would return (100 at most), the query runs and its page size is refused.
    const answer = await app.gql('{ timeline(first: 100000) { edges { node { text author { handle } } } } }', {}, token);
    expect(answer.errors?.[0]).toMatchObject({ message: 'first must be between 1 and 100', extensions: { code: 'BAD_USER_INPUT' } });
  });

  it('refuses nested lists over the budget when they hide inside inline fragments', async () => {
    const wrapped = '{ ... on Query { user(handle: "limits") { followers(first: 100) { edges { node { ... on User { followers(first: 100) { totalCount } } } } } } } }';
    const refused = await app.gql(wrapped, {}, token);
    expect(refused.status).toBe(400);
    expect(refused.errors?.[0]?.extensions).toMatchObject({ code: 'QUERY_TOO_COMPLEX', limit: 5000 });
  });

  it('refuses nested pages over the budget when their sizes are given with last', async () => {
    const nested = '{ timeline(last: 100) { edges { node { author { posts(last: 100) { edges { node { author { handle } } } } } } } } }';
    const refused = await app.gql(nested, {}, token);
    expect(refused.status).toBe(400);
    expect(refused.errors?.[0]?.extensions).toMatchObject({ code: 'QUERY_TOO_COMPLEX', limit: 5000 });
    // The same shape with first: is refused at the same cost.
    const byFirst = await app.gql(nested.replaceAll('last:', 'first:'), {}, token);
    expect(refused.errors?.[0]?.extensions?.cost).toBe(byFirst.errors?.[0]?.extensions?.cost);
  });

  it('lets a 100-post timeline page with authors through, far below the budget', async () => {
    const page = await app.gql(
      '{ timeline(first: 100) { edges { cursor node { id text createdAt author { handle displayName followerCount viewerIsFollowing } } } pageInfo { hasNextPage endCursor } } }',
      {},
      token,
    );
    expect(page.errors).toBeUndefined();
  });

  it('limits aliases, mutations per request, and allows one signUp or logIn per request', async () => {
    const aliases = Array.from({ length: 21 }, (_, i) => `a${i}: viewer { handle }`).join(' ');
    const aliased = await app.gql(`{ ${aliases} }`, {}, token);
    expect(aliased.status).toBe(400);
    expect(codeOf(aliased)).toBe('GRAPHQL_VALIDATION_FAILED');

    const signUps = await app.gql(
      'mutation { a: signUp(handle: "alias_one", password: "long enough") { token } b: signUp(handle: "alias_two", password: "long enough") { token } }',
    );
    expect(codeOf(signUps)).toBe('BAD_REQUEST');
    expect(await app.database.db.collection('users').countDocuments({ _id: { $in: ['alias_one', 'alias_two'] } as never })).toBe(0);

    const posts = Array.from({ length: 6 }, (_, i) => `p${i}: createPost(text: "spam ${i}") { id }`).join(' ');
    expect(codeOf(await app.gql(`mutation { ${posts} }`, {}, token))).toBe('BAD_REQUEST');
    expect(await app.database.db.collection('content').countDocuments({ _a: 'limits' })).toBe(0);
  });

  it('counts the mutations that fragments select at the root too', async () => {
    const post = (i: number) => `p${i}: createPost(text: "fragment spam ${i}") { id }`;
    const inline = `mutation { ... on Mutation { ${post(0)} ${post(1)} ${post(2)} } ... on Mutation { ${post(3)} ${post(4)} ${post(5)} } }`;
    expect(codeOf(await app.gql(inline, {}, token))).toBe('BAD_REQUEST');
    const spread = `mutation { ...First ...Second } fragment First on Mutation { ${post(0)} ${post(1)} ${post(2)} } fragment Second on Mutation { ${post(3)} ${post(4)} ${post(5)} }`;
    expect(codeOf(await app.gql(spread, {}, token))).toBe('BAD_REQUEST');
    expect(await app.database.db.collection('content').countDocuments({ _a: 'limits' })).toBe(0);

    const logIns = 'mutation { ... on Mutation { a: logIn(handle: "limits", password: "guess one") { token } } ... on Mutation { b: logIn(handle: "limits", password: "guess two") { token } } }';
    expect(codeOf(await app.gql(logIns))).toBe('BAD_REQUEST');

    // The same field under one response name, however often a fragment repeats it, runs once.
    const once = await app.gql(`mutation { ...Post ...Post ... on Mutation { ${post(0)} } } fragment Post on Mutation { ${post(0)} }`, {}, token);
    expect(once.errors).toBeUndefined();
    expect(await app.database.db.collection('content').countDocuments({ _a: 'limits' })).toBe(1);
  });

  it('applies the same limits to subscriptions over WebSocket', async () => {
    const client = liveClient(app, token);
    try {
      const { errors } = await runOverWebSocket(
        client,
        'subscription { timelinePostAdded { node { author { followers(first: 100) { edges { node { followers(first: 100) { totalCount } } } } } } } }',
      );
      expect(errors[0]?.extensions).toMatchObject({ code: 'QUERY_TOO_COMPLEX', limit: 5000 });
      expect(errors[0]?.extensions).not.toHaveProperty('http');
    } finally {
      await client.dispose();
    }
  });

  it('refuses a query nested thousands deep as a parse failure, over HTTP and WebSocket alike', async () => {
    const nested = `{ ${'viewer { '.repeat(5000)}handle${' }'.repeat(5000)} }`;
    const overHttp = await app.gql(nested, {}, token);
    expect(overHttp.status).toBe(400);
    expect(codeOf(overHttp)).toBe('GRAPHQL_PARSE_FAILED');
    expect(overHttp.errors?.[0]?.message).toMatch(/tokens/);
    const client = liveClient(app, token);
    try {
      const { errors } = await runOverWebSocket(client, `subscription ${nested}`);
      expect(errors[0]?.extensions).toMatchObject({ code: 'GRAPHQL_PARSE_FAILED' });
      expect(errors[0]?.message).toMatch(/tokens/);
    } finally {
      await client.dispose();
    }
  });
});
