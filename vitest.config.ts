import os from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'test/**/*.test.tsx'],
    // CLI tests start real processes and fsync real files: give them room on a busy 2-core machine.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // vitest's default is one worker fewer than the cores: on CI's 2 cores, one file at a time,
    // although most files wait on child processes, fsync and paced runs (measured: ~1.06 cores
    // busy over the whole run). One worker per core keeps both busy.
    maxWorkers: Math.max(2, os.availableParallelism()),
    // The CLI under test is the compiled package in dist/: rebuild it when a source is newer.
    // One PostgreSQL cluster made for the run, copied by each file that starts one.
    globalSetup: ['test/helpers/fresh-build.ts', 'test/helpers/postgres-template.ts'],
  },
});
