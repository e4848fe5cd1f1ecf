/**
 * What another process does to a folder of runs while a test reads it: starts a run that waits
 * for approval (`start`), reopens one that ended with a message to wait the same way (`reopen`),
 * or cancels one that waits (`cancel`); and the wait until the folder's time is old enough for
 * the index to trust it (RACY_MS), what a folder left alone comes to.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { expect, vi } from 'vitest';
import type { FileRuns } from '../../src/index.ts';
import { runsFolderStamp } from '../../src/runtime/runs-index.ts';
import { REPO } from './cli.ts';

export function otherRunProcess(dir: string, action: 'start' | 'reopen' | 'cancel', id: string): Promise<number | null> {
  const script = `
    import { FileRuns, openRun, resumeRun, startRun } from ${JSON.stringify(path.join(REPO, 'src/index.ts'))};
    import { endTurnReply, scriptedModel, toolUseReply } from ${JSON.stringify(path.join(REPO, 'src/testing.ts'))};
    import { countingTools } from ${JSON.stringify(path.join(REPO, 'test/helpers/counting-tools.ts'))};
    const [dir, action, id] = process.argv.slice(1);
    const runs = new FileRuns(dir);
    // The scripted model answers by the count of replies in the conversation: a reopened run's two come first.
    const again = [toolUseReply([{ id: 'toolu_again', name: 'send_email', input: { to: 'x@example.com' } }]), endTurnReply('sent')];
    const model = scriptedModel(action === 'start' ? again : [endTurnReply('-'), endTurnReply('-'), ...again]);
    const options = { store: runs.store(id), model, tools: countingTools().tools, requireApproval: ['send_email'], wait: false };
    if (action === 'start') await startRun({ ...options, task: id });
    else if (action === 'reopen') await resumeRun({ ...options, message: 'send it once more' });
    else await openRun({ store: runs.store(id) }).cancel({ by: 'ops' });`;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script, dir, action, id], { cwd: REPO, stdio: 'ignore' });
  return new Promise((resolve) => child.once('exit', resolve));
}

/** Waits until the folder of runs' time is old enough for the index to trust it. */
export async function settled(runs: FileRuns): Promise<void> {
  await vi.waitFor(() => expect(runsFolderStamp(runs.root)?.trusted).toBe(true), { timeout: 20_000, interval: 100 });
}
