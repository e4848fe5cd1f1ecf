/**
 * One view of a run from outside: `list` (listRuns over a folder) and the console's rows read
 * the same RunSummary of a run, made in one place: its state and category, what it waits for in
 * words and as data, who paused it, what it spent, and how many runs its calls started.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { readFolderRows } from '../../src/console/folder-rows.ts';
import { listRuns } from '../../src/fleet/list-runs.ts';
import { unreadableSummary, withChildren } from '../../src/runtime/run-summary.ts';
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

    const rows = await readFolderRows({ index: 0, root: runs.root, folderId: 'waiting-2', dir: path.join(runs.root, 'runs', 'waiting-2') }, new Map());
    // The console reads a folder at a time: it does not count a run's children.
    const { key, worker, leaseEpoch, location, children, ...row } = rows[0]!;
    const { location: journal, children: counted, ...summary } = waiting;
    expect(row).toEqual(summary);
    expect([worker, leaseEpoch, children, counted]).toEqual([null, null, null, 0]);
    expect(path.dirname(journal)).toBe(location);
  });

  it('counts the current runs started by a run’s calls, not archived ones', () => {
    const run = (runId: string, calledBy: string | null, archived = false) => ({
      ...unreadableSummary(runId, { location: runId, archived }, 'no journal'),
      calledBy: calledBy === null ? null : { runId: calledBy, toolUseId: `toolu_${runId}` },
    });
    const counted = withChildren([run('p', null), run('c1', 'p'), run('c2', 'p'), run('old', 'p', true), run('p', null, true)]);
    expect(counted.map((summary) => [summary.runId, summary.archived, summary.children])).toEqual([
      ['p', false, 2],
      ['c1', false, 0],
      ['c2', false, 0],
      ['old', true, 0],
      ['p', true, 0],
    ]);
  });
});
