/**
 * A command that reads a folder's own run, run where a program keeps its runs by id (and the
 * folder has no run of its own), names those runs and how to pick one, instead of only "no run".
 */
import { describe, expect, it } from 'vitest';
import { FileRuns } from '../../src/store/file-runs.ts';
import { startRun } from '../../src/runtime/run-api.ts';
import { endTurnReply, scriptedModel } from '../../src/model/scripted-model.ts';
import { runCli } from '../helpers/cli.ts';
import { tempDir } from '../helpers/temp-dir.ts';

describe('a command without --run in a folder of runs by id', () => {
  it('is refused (exit 2) with the ids it holds and how to name one; with --run it reads that run', async () => {
    const dir = tempDir();
    for (const id of ['invoice-acme', 'invoice-bolt']) {
      await startRun({ store: new FileRuns(dir).store(id), model: scriptedModel([endTurnReply('sent')]), tools: [], task: `Invoice ${id}` });
    }
    for (const command of ['status', 'history']) {
      const refused = runCli([command, '--dir', dir], { cwd: dir });
      expect(refused.code, command).toBe(2);
      expect(refused.stderr).toContain('No run is stored at');
      expect(refused.stderr).toContain('the folder holds runs by id (invoice-acme, invoice-bolt): name one with --run ID, e.g. --run invoice-acme');
    }
    expect(runCli(['status', '--dir', dir, '--run', 'invoice-bolt'], { cwd: dir }).code).toBe(0);
  });

  it('says nothing more in a folder with no runs at all', () => {
    const empty = tempDir();
    const refused = runCli(['status', '--dir', empty], { cwd: empty });
    expect(refused.code).toBe(2);
    expect(refused.stderr).not.toContain('runs by id');
  });
});
