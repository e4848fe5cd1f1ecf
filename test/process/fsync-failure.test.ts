/**
 * A failed fdatasync, injected into a real process by strace: the fsync that makes a side
 * effect's ledger entry durable fails (EIO). What the disk holds is then unknown, so the run
 * stops at once with exit 4 and starts nothing more; the resume reads what the disk really has,
 * and every side effect happens once (the first verified as done, the second run for the first time).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { expect, it } from 'vitest';
import { FileStore } from '../../src/store/file-store.ts';
import { foldJournal } from '../../src/store/journal/fold-journal.ts';
import { REPO } from '../helpers/cli.ts';
import { toolUseProblems } from '../helpers/messages.ts';
import { stracePresent } from '../helpers/system-tools.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const FIXTURE = path.join(REPO, 'test', 'fixtures', 'two-charges.ts');
const TSX = pathToFileURL(createRequire(path.join(REPO, 'package.json')).resolve('tsx')).href;

function fixture(dir: string, how: 'start' | 'resume', strace: string[] = []) {
  const node = [process.execPath, '--import', TSX, FIXTURE, dir, how];
  const [command, ...args] = strace.length ? ['strace', '-f', '-qq', ...strace, ...node] : node;
  return spawnSync(command!, args, { encoding: 'utf8', timeout: 60_000 });
}

const charges = (dir: string) => fs.readFileSync(path.join(dir, 'charges.log'), 'utf8').split('\n').filter(Boolean);

/** Which fdatasync of a run makes the first charge's ledger entry durable: the first after the charge, found by a traced run. */
function firstLedgerSync(): number {
  const dir = tempDir('da-fsync-dry-');
  const trace = path.join(dir, 'trace.txt');
  const dry = fixture(dir, 'start', ['-o', trace, '-e', 'trace=fdatasync,openat']);
  expect(dry.status, dry.stderr).toBe(0);
  const lines = fs.readFileSync(trace, 'utf8').split('\n');
  const charge = lines.findIndex((line) => line.includes('charges.log') && !line.includes('ENOENT'));
  expect(charge).toBeGreaterThan(0);
  return lines.slice(0, charge).filter((line) => /\bfdatasync\(/.test(line)).length + 1;
}

it.skipIf(!stracePresent())('a failed fdatasync of a ledger entry stops the run with exit 4; the resume does each side effect once', async () => {
  const nth = firstLedgerSync();
  const dir = tempDir('da-fsync-');
  const failed = fixture(dir, 'start', ['-o', '/dev/null', '-e', 'trace=fdatasync', '-e', `inject=fdatasync:error=EIO:when=${nth}`]);
  expect(failed.status, failed.stdout + failed.stderr).toBe(4);
  expect(failed.stderr).toMatch(/StoreWriteError: Could not confirm that the ledger entry .* is saved .*EIO.*started nothing more/);
  // The second charge never started.
  expect(charges(dir)).toHaveLength(1);

  const resumed = fixture(dir, 'resume');
  expect(resumed.status, resumed.stderr).toBe(0);
  expect(resumed.stdout.trim()).toBe('done');
  const done = charges(dir);
  expect(done).toHaveLength(2);
  expect(new Set(done).size).toBe(2);
  const store = new FileStore(path.join(dir, '.durable-agent'));
  const view = foldJournal(store.location, await store.load());
  expect(view.state).toBe('done');
  expect(toolUseProblems(view.context.messages)).toEqual([]);
}, 120_000);
