import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { closeAll, patience, texts, useWebClient } from './webClientHarness.js';

const manifest = fileURLToPath(new URL('../../examples/web/src/gql/persisted-documents.json', import.meta.url));

/**
 * A deployment that runs only the web client's trusted documents (the manifest codegen writes
 * from its operations): the client works as anywhere else, over HTTP and graphql-ws, and a
 * document of no manifest is refused.
 */
describe('the reference web client against a server that runs only its trusted documents', { timeout: 60_000 }, () => {
  const h = useWebClient({ TRUSTED_DOCUMENTS: manifest, TRUSTED_DOCUMENTS_ONLY: 'true' });

  it('signs up, posts, follows and gets a live post, while any other document is refused', async () => {
    const [writer, reader] = await Promise.all([h.person('trusted_writer'), h.person('trusted_reader')]);
    await writer.page.getByTestId('new-post').getByTestId('compose').fill('written through trusted documents');
    await writer.page.getByTestId('new-post').getByTestId('publish').click();
    await expect.poll(() => texts(writer.page), patience).toEqual(['written through trusted documents']);

    await reader.page.goto(`${h.web.url}#/u/trusted_writer`);
    await reader.page.getByTestId('follow').click();
    await expect.poll(() => reader.page.getByTestId('followers').textContent(), patience).toBe('1 follower');
    await reader.page.goto(h.web.url);
    await reader.page.getByTestId('refresh').click();
    await expect.poll(() => texts(reader.page), patience).toEqual(['written through trusted documents']);

    // Live: the subscription went over graphql-ws as a trusted document too.
    await writer.page.getByTestId('new-post').getByTestId('compose').fill('live and trusted');
    await writer.page.getByTestId('new-post').getByTestId('publish').click();
    await expect.poll(() => reader.page.getByTestId('new-posts').textContent(), patience).toBe('↑ 1 new post');

    const refused = await h.app.gql('{ user(handle: "trusted_writer") { posts { edges { node { text } } } } }', {}, reader.token);
    expect(refused).toMatchObject({ status: 400, errors: [{ extensions: { code: 'PERSISTED_QUERY_NOT_IN_LIST' } }] });
    await closeAll(writer, reader);
  });
});
