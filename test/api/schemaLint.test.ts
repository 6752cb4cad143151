import { readFile } from 'node:fs/promises';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

const root = new URL('../../', import.meta.url);

/** schema.graphql against graphql-eslint's schema and Relay rule sets (eslint.config.js). */
describe('the schema lint', () => {
  const eslint = new ESLint({ cwd: root.pathname });

  it('passes', async () => {
    const [result] = await eslint.lintFiles(['schema.graphql']);
    expect(result!.messages.map((message) => `${message.line}:${message.column} ${message.ruleId}: ${message.message}`)).toEqual([]);
  }, 60_000);

  it('would catch a connection that breaks Relay’s rules or a type without a description', async () => {
    const schema = await readFile(new URL('schema.graphql', root), 'utf8');
    const broken = schema.replace(/"A page of posts \(Relay's connection\)\."\ntype PostConnection \{\n  edges: \[PostEdge!\]!\n  pageInfo: PageInfo!\n\}/, 'type PostConnection {\n  edges: [PostEdge!]!\n}');
    expect(broken).not.toBe(schema);
    const [result] = await eslint.lintText(broken, { filePath: 'schema.graphql' });
    const rules = new Set(result!.messages.map((message) => message.ruleId));
    expect(rules).toContain('@graphql-eslint/relay-connection-types');
    expect(rules).toContain('@graphql-eslint/require-description');
  }, 60_000);
});
