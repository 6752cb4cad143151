// The schema's lint, run by `npm test` (test/api/schemaLint.test.ts): graphql-eslint's schema and
// Relay rule sets over schema.graphql. What is turned off or loosened, and why, is in the README
// ("Schema lint").
import graphqlPlugin from '@graphql-eslint/eslint-plugin';

export default [
  {
    files: ['schema.graphql'],
    languageOptions: { parser: graphqlPlugin.parser, parserOptions: { graphQLConfig: { schema: 'schema.graphql' } } },
    plugins: { '@graphql-eslint': graphqlPlugin },
    rules: {
      ...graphqlPlugin.configs['flat/schema-recommended'].rules,
      ...graphqlPlugin.configs['flat/schema-relay'].rules,
      // One-line descriptions are plain strings, longer ones block strings: both read well.
      '@graphql-eslint/description-style': 'off',
      // Only what has an identity has an id: pages, edges, payloads and values do not.
      '@graphql-eslint/strict-id-in-types': [
        'error',
        {
          exceptions: {
            types: ['PageInfo', 'AuthPayload', 'Suggestion', 'TimelineMarker', 'MarkNotificationsReadPayload', 'TagTrend', 'PostEdit'],
            suffixes: ['Connection', 'Edge'],
          },
        },
      ],
      // Short, bounded lists (a post's mentions, a group's first actors, `nodes`) are plain lists;
      // every list that pages is a connection of edges.
      '@graphql-eslint/relay-edge-types': ['error', { withEdgeSuffix: true, shouldImplementNode: true, listTypeCanWrapOnlyEdgeType: false }],
    },
  },
];
