/**
 * Every kind of await (walks/await-kinds.ts: an approval approved and denied, an answer, a timed
 * wait resumed after its deadline and at once, an event wait ended by its signal and by its
 * timeout), killed at every crash point of its path on the file store, resumed, and held to the
 * invariants of await-check.ts; and each invariant shown to catch what it is about. The fifth
 * kind, a sub-agent call waiting for its child run, is not here: a child queue exists only in a
 * fleet (da_runs), so its paths run on PostgreSQL alone (fleet/pg-await-paths.test.ts).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe } from 'vitest';
import { AwaitBaselines } from './await-check.ts';
import { AWAIT_CASES, AWAIT_PATHS, casesPerKind, defineAwaitCrashTests } from './await-suite.ts';
import { fileStores } from './scenario-runner.ts';

console.log(`[crash suite of awaits, file store] ${AWAIT_PATHS.length} kinds → ${AWAIT_CASES.length} crash-and-resume tests (${casesPerKind()})`);

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'da-await-suite-'));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));
let dirCount = 0;
const freshDir = () => {
  const dir = path.join(root, String(++dirCount));
  fs.mkdirSync(dir);
  return dir;
};
const stores = fileStores();

describe('crash anywhere in an await, resume, finish', () => {
  defineAwaitCrashTests(stores, new AwaitBaselines(stores, freshDir), freshDir);
});
