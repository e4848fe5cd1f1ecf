/**
 * The crash suite again with every run sealed: each crash point on each path of the machine,
 * on the real runtime and a real file store whose runs are started with a key, crashed there,
 * resumed from the store alone (with the key) in a fresh runtime and run to the end; nothing
 * lost, nothing done twice, every tool_use with its tool_result, and nothing of the content left
 * readable in the journal.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { KeyRing } from '../../src/seal/keys.ts';
import { JOURNAL_FILE } from '../../src/store/file-store.ts';
import { Baselines, checkCrash, crashCases } from './crash-check.ts';
import { generateCrashPaths } from './crash-paths.ts';
import { fileStores } from './scenario-runner.ts';

const { paths } = generateCrashPaths();
const cases = crashCases(paths, { powerLoss: true });

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'da-crash-suite-sealed-'));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }), 600_000);
let dirCount = 0;
const freshDir = () => {
  const dir = path.join(root, String(++dirCount));
  fs.mkdirSync(dir);
  return dir;
};
const stores = fileStores(KeyRing.of([{ id: 'suite', key: randomBytes(32) }]));
const baselines = new Baselines(stores, freshDir);

/** A sealed journal: its header names its run key, and no record holds the text of a message or a tool result. */
function expectSealed(dir: string): void {
  const journal = path.join(dir, '.durable-agent', JOURNAL_FILE);
  const lines = fs.readFileSync(journal, 'utf8').split('\n').filter((line) => line.length > 9);
  expect(JSON.parse(lines[0]!.slice(9))).toMatchObject({ sealed: expect.stringMatching(/^rk-/) });
  for (const line of lines.slice(2)) {
    const record = JSON.parse(line.slice(9)) as { sealed?: string; task?: unknown };
    expect(record.sealed).toMatch(/^rk-/);
    if (record.task !== undefined) expect(record.task).toMatch(/^sealed:1:rk-/);
  }
}

describe('crash anywhere in a sealed run, resume with its key, finish', () => {
  it.concurrent.each(cases)('$name', async (crash) => {
    const dir = freshDir();
    await checkCrash(crash, stores, baselines, dir);
    if (fs.existsSync(path.join(dir, '.durable-agent', JOURNAL_FILE))) expectSealed(dir);
  });
});
