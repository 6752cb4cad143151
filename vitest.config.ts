import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/globalSetup.ts'],
    // Each test file gets its own database on the shared server, so files run in parallel.
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 180_000,
  },
});
