import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'test/**/*.test.tsx'],
    // CLI tests start real processes and fsync real files: give them room on a busy 2-core machine.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // The CLI under test is the compiled package in dist/: rebuild it when a source is newer.
    globalSetup: ['test/helpers/fresh-build.ts'],
  },
});
