import { readFileSync } from 'node:fs';
import { makeExecutableSchema } from '@graphql-tools/schema';
import type { GraphQLSchema } from 'graphql';
import { resolvers } from './resolvers.js';

const schemaFile = new URL('../../schema.graphql', import.meta.url);

/** One executable schema for HTTP and WebSocket alike. */
export function buildSchema(): GraphQLSchema {
  return makeExecutableSchema({ typeDefs: readFileSync(schemaFile, 'utf8'), resolvers });
}
