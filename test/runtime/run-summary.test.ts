/**
 * One view of a run from outside: `list` (listRuns over a folder) and the console's rows read
 * the same RunSummary of a run, made in one place: its state and category, what it waits for in
 * words and as data, who paused it, what it spent, and how many runs its calls started.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { readFolderRows } from '../../src/console/folder-rows.ts';
import { listRuns } from '../../src/fleet/list-runs.ts';
import { FileRuns } from '../../src/store/file-runs.ts';
import { startRun } from '../../src/index.ts';
import { endTurnReply, scriptedModel, toolUseReply } from '../../src/testing.ts';
import { countingTools } from '../helpers/counting-tools.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const invoiceScript = () => [toolUseReply([{ id: 'toolu_send', name: 'send_email', input: { to: 'billing@example.com' } }]), endTurnReply('invoice sent')];

describe('a run summary', () => {
  it('says where a run stands, what it waits for and who paused it, the same for list and the console', async () => {
    const root = tempDir();
    const runs = new FileRuns(root);
    const { tools } = countingTools();
    await startRun({ store: runs.store('done-1'), model: scriptedModel(invoiceScript()), tools, task: 'Send invoice 1', maxTurns: 7 });
    await startRun({ store: runs.store('waiting-2'), model: scriptedModel(invoiceScript()), tools, task: 'Send invoice 2', requireApproval: ['send_email'], wait: false });
    await runs.store('waiting-2').control.write({ kind: 'pause', by: 'ops', reason: null, at: Date.now() });

    const listed = await listRuns(runs);
    const done = listed.find((run) => run.runId === 'done-1')!;
    expect(done).toMatchObject({ source: 'folder', state: 'done', category: 'done', task: 'Send invoice 1', turn: 1, maxTurns: 7, waitsFor: null, waitingOn: null, pausedBy: null, children: 0, archived: false, problem: null });
    expect(done.tokens).toBeGreaterThan(0);
    expect(done.usage).not.toBeNull();
    const waiting = listed.find((run) => run.runId === 'waiting-2')!;
    expect(waiting).toMatchObject({
      state: 'awaitingDecision',
      category: 'paused',
      pausedBy: 'ops',
      waitsFor: 'toolu_send send_email: approval',
      waitingOn: { kind: 'call', toolUseId: 'toolu_send', name: 'send_email', needs: 'approval' },
    });

    const rows = await readFolderRows({ index: 0, root, folderId: 'waiting-2', dir: path.join(root, 'runs', 'waiting-2') }, new Map());
    const { key, worker, leaseEpoch, location, ...row } = rows[0]!;
    const { location: journal, ...summary } = waiting;
    expect(row).toEqual(summary);
    expect([worker, leaseEpoch]).toEqual([null, null]);
    expect(path.dirname(journal)).toBe(location);
  });
});
