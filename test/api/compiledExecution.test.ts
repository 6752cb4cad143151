import { parse } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compiledExecution } from '../../src/api/compiledExecution.js';
import { buildSchema } from '../../src/api/schema.js';
import { startExecutionPair } from '../support/executionPair.js';
import type { TestApp } from '../support/testApp.js';

/**
 * GRAPHQL_EXECUTION=compiled (graphql-jit, the default) must answer exactly as graphql-js does:
 * the same data, and errors with the same messages, locations, paths and codes.
 */
describe('compiled execution', () => {
  let compiled: TestApp;
  let interpreted: TestApp;
  let token: string;
  let postId: string;

  beforeAll(async () => {
    let postIds: string[];
    ({ compiled, interpreted, token, postIds } = await startExecutionPair(['hello']));
    postId = postIds[0]!;
  });
  afterAll(async () => {
    await interpreted?.stop();
    await compiled?.stop();
  });

  const cases: [string, string, Record<string, unknown>, boolean][] = [
    ['a page with nested fields', '{ timeline(first: 5) { edges { node { text likeCount author { handle followerCount } } } pageInfo { hasNextPage } } }', {}, true],
    ['a resolver error (page too large)', '{ timeline(first: 1000) { edges { cursor } } }', {}, true],
    ['a resolver error on the third line, beside data', 'query Two {\n  viewer { handle }\n  timeline(first: 0) { edges { cursor } }\n}', {}, true],
    ['no token', '{ timeline { edges { cursor } } }', {}, false],
    ['a missing variable', 'query($n: Int!) { timeline(first: $n) { edges { cursor } } }', {}, true],
    ['a variable of the wrong type', 'query($n: Int!) { timeline(first: $n) { edges { cursor } } }', { n: 'many' }, true],
    ['a post by variable', 'query($id: ID!) { post(id: $id) { text author { handle } } }', { id: 'POST' }, true],
    ['a bad post id', '{ post(id: "not-an-id") { text } }', {}, true],
    ['a mutation refused', 'mutation { deletePost(id: "POST") }', {}, true],
    [
      'fragments, aliases, directives and introspection',
      'query($full: Boolean!) { first: timeline(first: 1) { ...page } all: timeline(first: 5) { ...page } viewer { handle @include(if: $full) __typename } __schema { queryType { name } } } fragment page on PostConnection { edges { node { text @skip(if: $full) author { handle } } } }',
      { full: true },
      true,
    ],
  ];

  it.each(cases)('answers %s exactly as graphql-js does', async (_name, query, variables, signedIn) => {
    const withPost = JSON.parse(JSON.stringify(variables).replace('POST', postId)) as Record<string, unknown>;
    const text = query.replace('POST', postId);
    // The first request of a document is interpreted (compiling pays only for documents sent again): the second is compiled.
    await compiled.gql(text, withPost, signedIn ? token : undefined);
    const fromCompiled = await compiled.gql(text, withPost, signedIn ? token : undefined);
    const fromInterpreted = await interpreted.gql(text, withPost, signedIn ? token : undefined);
    expect(fromCompiled).toEqual(fromInterpreted);
  });
});

describe('compiling', () => {
  it('compiles a document the second time it is sent, not the first, and then reuses it', async () => {
    const gateway = compiledExecution(buildSchema());
    const { executor } = await gateway.load({ apollo: { key: undefined, keyHash: undefined, graphRef: undefined } } as never);
    const query = '{ __typename }';
    const request = { queryHash: 'hash-of-typename', operationName: null, document: parse(query), context: {}, request: { query, variables: {} } };
    const run = () => executor!(request as never);
    expect(await run()).toEqual({ data: { __typename: 'Query' } });
    expect(gateway.compiledOperations()).toBe(0);
    expect(await run()).toEqual({ data: { __typename: 'Query' } });
    expect(gateway.compiledOperations()).toBe(1);
    await run();
    expect(gateway.compiledOperations()).toBe(1);
  });
});
