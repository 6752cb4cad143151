import { defineConfig } from 'vitest/config';

export default defineConfig({
  resolve: {
    // graphql 16 has a CommonJS `main` and an ESM `module` but no "exports": Node (and so every
    // dependency, Apollo and graphql-ws included) loads the CommonJS build, while Vite would give our
    // sources the ESM one, and the two refuse each other's schemas. Use the one Node uses, as in production.
    alias: [{ find: /^graphql$/, replacement: 'graphql/index.js' }],
  },
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/globalSetup.ts'],
    // Each test file gets its own database on the shared server, so files run in parallel.
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 180_000,
  },
});
