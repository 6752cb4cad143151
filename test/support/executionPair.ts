import { startTestApp, type TestApp } from './testApp.js';

/**
 * Two instances on one database, one with compiled execution (the default) and one interpreted,
 * to compare answers: `reader` follows `writer`, who has posted `texts` in order, delivered.
 */
export async function startExecutionPair(texts: readonly string[]): Promise<{ compiled: TestApp; interpreted: TestApp; token: string; postIds: string[] }> {
  const compiled = await startTestApp();
  const interpreted = await startTestApp({ MONGODB_URI: compiled.mongodbUri, GRAPHQL_EXECUTION: 'interpreted' });
  const token = await compiled.signUp('reader');
  const writer = await compiled.signUp('writer');
  await compiled.gql('mutation { follow(handle: "writer") { handle } }', {}, token);
  const postIds: string[] = [];
  for (const text of texts) {
    postIds.push((await compiled.gql('mutation($text: String!) { createPost(text: $text) { id } }', { text }, writer)).data.createPost.id);
  }
  await compiled.settled();
  return { compiled, interpreted, token, postIds };
}
