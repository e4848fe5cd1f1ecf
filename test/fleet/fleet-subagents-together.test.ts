/**
 * A fleet parent and its queued children together: the parent waits for them without being
 * driven, so a cancel or a pause asked of it is passed on to them wherever they are — waiting
 * for a person (no worker drives them) or driven by a worker — and its status and pending list
 * show them and what they wait for. A cancel ends both children cancelled, naming the parent; a pause stops the
 * running children, unpausing the parent lets them and then the parent finish, each note once.
 */
import { describe, expect, it, vi } from 'vitest';
import { openRun, subagentTool } from '../../src/index.ts';
import { decide } from '../../src/awaits/decide.ts';
import { submitRun } from '../../src/fleet/submit-run.ts';
import { listQueuedRuns as listRunsOf } from '../../src/fleet/run-queue.ts';
import { Worker } from '../../src/fleet/worker.ts';
import { foldJournal } from '../../src/store/journal/fold-journal.ts';
import { openDatabase } from '../../src/store/pg/pool.ts';
import { PgRunStore } from '../../src/store/pg/pg-store.ts';
import { auditOf, editorAgent, writerAgent, type WriterOptions } from '../helpers/subagent-agents.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { freshDatabase, postgresAvailable, usePostgres } from '../helpers/use-postgres.ts';
import type { Pool } from 'pg';
import { runCliAsync } from '../helpers/cli.ts';

const CHILDREN = ['editor-1.toolu_a', 'editor-1.toolu_b'];

async function stateOf(pool: Pool, id: string) {
  const store = new PgRunStore(pool, id);
  return foldJournal(store.location, await store.load());
}

function workerOf(pool: Pool, dir: string, writer: WriterOptions, lines: string[], exitWhenIdle: boolean) {
  const editor = editorAgent([subagentTool(writerAgent(dir, writer))]);
  return { editor, worker: new Worker({ pool, agents: [editor], runConcurrency: 2, leaseMs: 60_000, exitWhenIdle, pollIntervalMs: 50, log: (line) => lines.push(line) }) };
}

describe.skipIf(!postgresAvailable())('a fleet parent and its children together', () => {
  usePostgres({ connections: 2 });

  it('the parent lists what its children wait for; its cancel ends them cancelled, naming it, and nothing is written', async () => {
    const dir = tempDir('da-fleet-together-cancel-');
    const url = await freshDatabase('fleet_together_cancel');
    const pool = await openDatabase(url, 6);
    try {
      const lines: string[] = [];
      const { editor, worker } = workerOf(pool, dir, { approval: true }, lines, true);
      await submitRun(pool, { agent: editor, task: 'Write two notes.', runId: 'editor-1' });
      // The parent queues both children; each waits for a person: no run is left to drive.
      await worker.run();
      const parent = openRun({ store: new PgRunStore(pool, 'editor-1') });
      const pending = await parent.pending();
      expect(pending.map((call) => [call.run, call.name]), lines.join('\n')).toEqual(CHILDREN.map((id) => [id, 'write_note']));
      // The fleet's list says what the parent waits for, and the console's row too.
      const fleet = await runCliAsync(['status', '--database-url', url], { cwd: dir });
      expect(fleet.stdout).toMatch(new RegExp(`editor-1 .*\\(waits for its sub-agent runs ${CHILDREN.join(', ').replace(/\./g, '\\.')}\\)`));
      const { fleetRows } = await import('../../src/console/fleet-rows.ts');
      expect((await fleetRows(pool)).find((row) => row.runId === 'editor-1')?.waitsFor).toBe(`its sub-agent runs ${CHILDREN.join(', ')}`);
      // The parent's page in the console: its children (each a link to its page) and the calls they wait on.
      const { runDetail } = await import('../../src/console/run-detail.ts');
      const page = await runDetail({ key: 'fleet~editor-1', source: 'fleet', store: new PgRunStore(pool, 'editor-1'), archivedJournal: null, runDir: null, folder: null });
      expect(page.lineage.children.map((child) => [child.runId, child.state, child.key])).toEqual(CHILDREN.map((id) => [id, 'awaitingDecision', `fleet~${id}`]));
      expect(page.pending.map((call) => [call.run, call.name])).toEqual(CHILDREN.map((id) => [id, 'write_note']));
      const childPage = await runDetail({ key: `fleet~${CHILDREN[0]}`, source: 'fleet', store: new PgRunStore(pool, CHILDREN[0]!), archivedJournal: null, runDir: null, folder: null });
      expect(childPage.lineage.calledBy).toEqual({ runId: 'editor-1', toolUseId: 'toolu_a', key: 'fleet~editor-1' });
      const listed = await runCliAsync(['pending', '--database-url', url, '--run', 'editor-1', '--json'], { cwd: dir });
      expect(listed.code, listed.stderr).toBe(0);
      expect((JSON.parse(listed.stdout) as Array<{ run?: string; name: string }>).map((call) => [call.run, call.name])).toEqual(CHILDREN.map((id) => [id, 'write_note']));
      // A child's call is decided through the parent by its id: the decision goes to that child.
      const approved = await runCliAsync(['approve', '--database-url', url, '--run', 'editor-1', 'toolu_w_noteA', '--by', 'ana'], { cwd: dir });
      expect(approved.code, approved.stderr).toBe(0);
      expect(approved.stdout).toContain(`fleet run ${CHILDREN[0]}, a sub-agent run of editor-1`);
      expect((await new PgRunStore(pool, CHILDREN[0]!).decisions.read()).map((d) => [d.tool_use_id, d.verdict, d.by])).toEqual([['toolu_w_noteA', 'approved', 'ana']]);
      // Its status shows the tree: the fleet knows which runs the parent waits for.
      const status = await parent.status();
      expect(status.children.map((child) => [child.runId, child.toolUseId, child.state])).toEqual([
        [CHILDREN[0], 'toolu_a', 'awaitingDecision'],
        [CHILDREN[1], 'toolu_b', 'awaitingDecision'],
      ]);

      // The command line's cancel, as an operator gives it: it says where the cancel went.
      const cancel = await runCliAsync(['cancel', '--database-url', url, '--run', 'editor-1', '--by', 'ops', '--reason', 'not needed'], { cwd: dir });
      expect(cancel.code, cancel.stderr).toBe(0);
      expect(cancel.stdout).toContain('[cancelled] the run in fleet run editor-1 is cancelled by ops');
      for (const id of CHILDREN) expect(cancel.stdout).toContain(`  its sub-agent run ${id}: cancelled (no process drove it).`);
      expect((await stateOf(pool, 'editor-1')).state).toBe('cancelled');
      for (const id of CHILDREN) {
        const child = await stateOf(pool, id);
        expect(child.state).toBe('cancelled');
        expect(child.context.cancellation).toMatchObject({ by: 'ops', reason: 'its parent run editor-1 was cancelled (not needed)' });
      }
      // A decision for a child now is refused: its run has ended.
      await expect(decide(new PgRunStore(pool, CHILDREN[1]!), { tool_use_id: pending[1]!.tool_use_id, verdict: 'approved' })).rejects.toThrow(/has ended \(cancelled\)/);
      expect(auditOf(dir)).toEqual([]);
    } finally {
      await pool.end();
    }
  }, 60_000);

  it('its cancel reaches children queued and not yet started: the worker that takes them up ends them cancelled, running nothing', async () => {
    const dir = tempDir('da-fleet-together-queued-');
    const pool = await openDatabase(await freshDatabase('fleet_together_queued'), 6);
    try {
      const lines: string[] = [];
      const editor = editorAgent([subagentTool(writerAgent(dir))]);
      // One slot, stopped as soon as the parent has queued its children: none of them is started.
      const worker: Worker = new Worker({
        pool, agents: [editor], runConcurrency: 1, leaseMs: 60_000, exitWhenIdle: true, pollIntervalMs: 50,
        log: (line) => {
          lines.push(line);
          if (line.includes('waits for its sub-agent run')) worker.stop('the children stay queued');
        },
      });
      await submitRun(pool, { agent: editor, task: 'Write two notes.', runId: 'editor-1' });
      await worker.run();
      const { rows } = await pool.query<{ id: string; records: number }>('SELECT id, records FROM da_runs WHERE id = ANY($1) ORDER BY id', [CHILDREN]);
      expect(rows, lines.join('\n')).toEqual(CHILDREN.map((id) => ({ id, records: 0 })));

      const outcome = await openRun({ store: new PgRunStore(pool, 'editor-1') }).cancel({ by: 'ops', reason: 'not needed' });
      expect(outcome.outcome).toBe('cancelled');
      expect(outcome.passedOn).toEqual(CHILDREN.map((runId) => ({ runId, outcome: 'requested' })));
      const after = workerOf(pool, dir, {}, lines, true).worker;
      await after.run();
      for (const id of CHILDREN) {
        const child = await stateOf(pool, id);
        expect(child.state, lines.join('\n')).toBe('cancelled');
        expect(child.context.cancellation).toMatchObject({ by: 'ops', reason: 'its parent run editor-1 was cancelled (not needed)' });
      }
      expect((await stateOf(pool, 'editor-1')).state).toBe('cancelled');
      expect(auditOf(dir)).toEqual([]);
    } finally {
      await pool.end();
    }
  }, 60_000);

  it("a call whose child outlives its timeoutMs gives up: the parent is taken up again, the model reads why, and the child goes on", async () => {
    const dir = tempDir('da-fleet-together-timeout-');
    const pool = await openDatabase(await freshDatabase('fleet_together_timeout'), 6);
    try {
      const lines: string[] = [];
      // The children wait for a person nobody is: the parent's calls give up after 300 ms.
      const editor = editorAgent([subagentTool(writerAgent(dir, { approval: true }), { timeoutMs: 300 })]);
      const workerOf1 = () => new Worker({ pool, agents: [editor], runConcurrency: 2, leaseMs: 60_000, exitWhenIdle: true, pollIntervalMs: 50, log: (line) => lines.push(line) });
      await submitRun(pool, { agent: editor, task: 'Write two notes.', runId: 'editor-1' });
      await workerOf1().run();
      // It waited for its children first. On a loaded machine this worker may already see the
      // 300 ms pass before it goes idle and finish the parent; otherwise the next worker does.
      const waited = `run editor-1: waits for its sub-agent runs ${CHILDREN.join(', ')} (queued for any worker); saved, lease released, taken up again when they have ended`;
      expect(lines.some((line) => line.endsWith(waited)), lines.join('\n')).toBe(true);
      if ((await stateOf(pool, 'editor-1')).state !== 'done') {
        expect((await listRunsOf(pool)).find((run) => run.id === 'editor-1')?.waitsForRuns).toEqual(CHILDREN);
        await new Promise((resolve) => setTimeout(resolve, 400));
        await workerOf1().run();
      }
      const parent = await stateOf(pool, 'editor-1');
      expect(parent.state, lines.join('\n')).toBe('done');
      expect(parent.context.finalText).toContain('did not end within 300 ms: the call gave up on it, and the child goes on');
      for (const id of CHILDREN) expect((await stateOf(pool, id)).state).toBe('awaitingDecision');
      expect((await listRunsOf(pool)).find((run) => run.id === 'editor-1')?.waitsForRuns).toEqual([]);
    } finally {
      await pool.end();
    }
  }, 60_000);

  it('its pause stops the children other workers drive; unpausing it lets them and then it finish, each note once', async () => {
    const dir = tempDir('da-fleet-together-pause-');
    const pool = await openDatabase(await freshDatabase('fleet_together_pause'), 8);
    const lines: string[] = [];
    let writing = 0;
    const { editor, worker } = workerOf(pool, dir, { slowMs: 600, onWrite: (phase) => (writing += phase === 'start' ? 1 : 0) }, lines, false);
    const running = worker.run();
    try {
      await submitRun(pool, { agent: editor, task: 'Write two notes.', runId: 'editor-1' });
      await vi.waitFor(() => expect(writing, `both children writing:\n${lines.join('\n')}`).toBe(2), { timeout: 30_000, interval: 50 });
      // The worker that queued the children lets the parent go once its turn is written; on a busy
      // machine the children may start writing before that release lands.
      await vi.waitFor(async () => expect((await pool.query('SELECT lease_owner FROM da_runs WHERE id = $1', ['editor-1'])).rows[0].lease_owner).toBeNull(), { timeout: 30_000, interval: 20 });
      const parent = openRun({ store: new PgRunStore(pool, 'editor-1') });
      // No worker drives the parent while its children run: its pause is theirs.
      const paused = await parent.pause({ by: 'ops' });
      expect(paused).toMatchObject({ outcome: 'requested', waitsForChildren: true, passedOn: CHILDREN.map((runId) => ({ runId, outcome: 'requested' })) });
      await vi.waitFor(
        async () => {
          const { rows } = await pool.query<{ n: string }>("SELECT count(*) AS n FROM da_runs WHERE id = ANY($1) AND lease_owner IS NULL AND state <> 'done'", [CHILDREN]);
          const paused = Number(rows[0]!.n) === 2 && (await Promise.all(CHILDREN.map(async (id) => (await new PgRunStore(pool, id).control.read()).some((r) => r.kind === 'pause')))).every(Boolean);
          expect(paused, `both children paused:\n${lines.join('\n')}`).toBe(true);
        },
        { timeout: 30_000, interval: 50 },
      );
      // Paused, they stay where they are: the parent too.
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect((await stateOf(pool, 'editor-1')).state).not.toBe('done');
      for (const id of CHILDREN) expect((await stateOf(pool, id)).state).not.toBe('done');

      expect(await parent.unpause()).toMatchObject({ kind: 'pause', by: 'ops' });
      await vi.waitFor(async () => expect((await stateOf(pool, 'editor-1')).state, `the parent done:\n${lines.join('\n')}`).toBe('done'), { timeout: 30_000, interval: 50 });
      for (const id of CHILDREN) expect((await stateOf(pool, id)).state).toBe('done');
      const audit = auditOf(dir);
      expect(audit).toHaveLength(2);
      expect(new Set(audit).size).toBe(2);
    } finally {
      worker.stop('the test is over');
      await running;
      await pool.end();
    }
  }, 60_000);
});
