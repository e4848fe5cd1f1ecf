/** The plain path must not pay for React: a run whose stdout is not a terminal never loads ink or React. */
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { expect, it } from 'vitest';
import { REPO, runCliAsync } from '../helpers/cli.ts';
import { tempDir } from '../helpers/temp-dir.ts';

it('a piped demo run loads neither ink nor React', async () => {
  const dir = tempDir();
  const log = path.join(dir, 'imports.log');
  const hook = pathToFileURL(path.join(REPO, 'test/fixtures/log-imports.mjs')).href;
  const run = await runCliAsync(['demo'], { cwd: dir, env: { NODE_OPTIONS: `--import ${hook}`, IMPORT_LOG: log } });
  expect(run.code).toBe(0);
  expect(run.stdout).toContain('[done]');
  const loaded = fs.readFileSync(log, 'utf8').split('\n');
  expect(loaded.some((url) => url.includes('/node_modules/xstate/')), 'the hook sees package imports').toBe(true);
  expect(loaded.some((url) => url.endsWith('/dist/src/cli/run-reporter.js'))).toBe(true);
  expect(loaded.filter((url) => /\/node_modules\/(ink|react|react-reconciler|yoga-layout)\//.test(url))).toEqual([]);
  expect(loaded.filter((url) => url.includes('/src/tui/'))).toEqual([]);
});

it('the CLI runs compiled JavaScript: no TypeScript source, no tsx, no esbuild, no pg', async () => {
  const dir = tempDir();
  const log = path.join(dir, 'imports.log');
  const hook = pathToFileURL(path.join(REPO, 'test/fixtures/log-imports.mjs')).href;
  const run = await runCliAsync(['demo'], { cwd: dir, env: { NODE_OPTIONS: `--import ${hook}`, IMPORT_LOG: log } });
  expect(run.code).toBe(0);
  const loaded = fs.readFileSync(log, 'utf8').split('\n').filter(Boolean);
  expect(loaded.some((url) => url.includes('/dist/src/cli/main.js'))).toBe(true);
  expect(loaded.filter((url) => /\.tsx?$/.test(url))).toEqual([]);
  expect(loaded.filter((url) => /\/node_modules\/(tsx|esbuild|pg|@anthropic-ai)\//.test(url))).toEqual([]);
});
