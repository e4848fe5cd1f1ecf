/**
 * A run SIGKILLed as its journal is created, at each point of the file store's creation (a sealed
 * run's key file durable while the journal's temp file is on its way; both durable; the journal
 * linked to its name) and once its first record is durable, plain and sealed. The kill leaves no
 * run, and a new run starts in the folder, or a run that opens and resumes to its end; never a
 * sealed journal without its key file. A rotation of the keys afterwards fails on nothing, and
 * the run still opens under the new master key.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { endTurnReply, scriptedModel, toolUseReply } from '../../src/model/scripted-model.ts';
import { resumeRun, startRun } from '../../src/runtime/run-api.ts';
import { KeyRing } from '../../src/seal/keys.ts';
import { FileStore, JOURNAL_FILE } from '../../src/store/file-store.ts';
import { RUN_KEY_FILE, rotateRunKeys } from '../../src/store/run-key-file.ts';
import { countingTools } from '../helpers/counting-tools.ts';
import { REPO } from '../helpers/cli.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const FIXTURE = path.join(REPO, 'test', 'fixtures', 'create-killed-run.ts');
const TSX = pathToFileURL(createRequire(path.join(REPO, 'package.json')).resolve('tsx')).href;
const script = () => [toolUseReply([{ id: 'toolu_a', name: 'lookup', input: { q: 'the balance' } }]), endTurnReply('The balance is 12.')];

function killedRun(dir: string, point: string, key: string): Promise<{ signal: NodeJS.Signals | null; output: string }> {
  const child = spawn(process.execPath, ['--import', TSX, FIXTURE, dir, point, key], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  return new Promise((resolve) => child.on('close', (_code, signal) => resolve({ signal, output })));
}

/** Where each kill leaves the journal: not yet linked, or in place. */
const POINTS = [
  { point: 'run-key', journal: false, sealedOnly: true },
  { point: 'journal-temp', journal: false, sealedOnly: false },
  { point: 'journal-link', journal: true, sealedOnly: false },
  { point: 'save-start', journal: true, sealedOnly: false },
] as const;
const cases = POINTS.flatMap(({ point, journal, sealedOnly }) => [
  { point, journal, sealed: true },
  ...(sealedOnly ? [] : [{ point, journal, sealed: false }]),
]);

describe('a run SIGKILLed as its journal is created', () => {
  it.each(cases)('$point, sealed: $sealed: no run or a run that opens, never a sealed journal without its key', { timeout: 60_000 }, async ({ point, journal, sealed }) => {
    const k1 = randomBytes(32);
    const keys = sealed ? KeyRing.of([{ id: 'k1', key: k1 }]) : undefined;
    // The rotation's ring: new runs sealed under k2, those under k1 still opened.
    const rotation = KeyRing.of([{ id: 'k2', key: randomBytes(32) }, { id: 'k1', key: k1 }]);
    const dir = tempDir('da-create-kill-');
    const state = path.join(dir, '.durable-agent');
    const killed = await killedRun(dir, point, sealed ? k1.toString('hex') : 'plain');
    expect(killed.signal, killed.output).toBe('SIGKILL');

    const journalPath = path.join(state, JOURNAL_FILE);
    const keyPath = path.join(state, RUN_KEY_FILE);
    expect(fs.existsSync(journalPath)).toBe(journal);
    if (sealed && journal) expect(fs.existsSync(keyPath), 'a sealed journal has its key file').toBe(true);
    if (!sealed) expect(fs.existsSync(keyPath)).toBe(false);

    if (sealed) {
      // A rotation passes over whatever the kill left; the run, if there is one, opens under the new master key after it.
      const rotated = await rotateRunKeys(state, rotation);
      expect(rotated.failed).toEqual([]);
      if (journal) expect((JSON.parse(fs.readFileSync(keyPath, 'utf8')) as { master: string }).master).toBe('k2');
    }
    const { tools, counter } = countingTools();
    const store = new FileStore(state);
    const result = journal
      ? await resumeRun({ store, ...(keys ? { keys: rotation } : {}), model: scriptedModel(script()), tools })
      : await startRun({ store, ...(keys ? { keys } : {}), model: scriptedModel(script()), tools, task: 'Look up the balance of account 4471.' });
    store.close();
    expect(result).toMatchObject({ status: 'done', text: 'The balance is 12.' });
    expect(counter.of('toolu_a')).toBe(1);
    const header = JSON.parse(fs.readFileSync(journalPath, 'utf8').split('\n')[0]!.slice(9)) as { sealed?: string };
    expect(header.sealed !== undefined).toBe(sealed);
  });
});
