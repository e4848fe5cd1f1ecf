/**
 * A fleet parent waiting for its sub-agent runs is a run in the machine's waiting state, like one
 * waiting for a person: its calls are flagged as they arrive (needs 'child'), the journal says
 * what it waits for, a child's end comes back through the parent's decisions (and is read from the
 * child itself when that delivery was lost to a kill), a person can stop waiting but not answer for
 * the child, and a parent recorded by the release before child awaits still resumes to its end.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { subagentTool } from '../../src/index.ts';
import { decide } from '../../src/awaits/decide.ts';
import { submitRun } from '../../src/fleet/submit-run.ts';
import { Worker } from '../../src/fleet/worker.ts';
import { JOURNAL_VERSION_CHILD_AWAITS } from '../../src/store/journal/journal-record.ts';
import { openDatabase } from '../../src/store/pg/pool.ts';
import { PgRunStore } from '../../src/store/pg/pg-store.ts';
import { foldJournal } from '../../src/store/journal/fold-journal.ts';
import { runCliAsync } from '../helpers/cli.ts';
import { auditOf, editorAgent, writerAgent } from '../helpers/subagent-agents.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { freshDatabase, postgresAvailable, usePostgres } from '../helpers/use-postgres.ts';
import type pg from 'pg';

const CHILDREN = ['editor-1.toolu_a', 'editor-1.toolu_b'];

/** A worker of one slot that stops (after the step under way) once a line matching `until` is logged. */
function workerUntil(pool: pg.Pool, dir: string, until: RegExp | null, lines: string[]) {
  const editor = editorAgent([subagentTool(writerAgent(dir))]);
  const worker: Worker = new Worker({
    pool,
    agents: [editor],
    runConcurrency: 1,
    leaseMs: 60_000,
    exitWhenIdle: true,
    pollIntervalMs: 50,
    log: (line) => {
      lines.push(line);
      if (until?.test(line)) worker.stop('the test looks');
    },
  });
  return { editor, worker };
}

async function parentOf(pool: pg.Pool) {
  const store = new PgRunStore(pool, 'editor-1');
  const loaded = await store.load();
  return { loaded, ...foldJournal(store.location, loaded) };
}

describe.skipIf(!postgresAvailable())('a fleet parent waiting for its sub-agent runs', () => {
  usePostgres({ connections: 2 });

  it('rests in awaitingDecision with its calls flagged, says so in status --json, and a person can stop waiting but not answer for the child', async () => {
    const dir = tempDir('da-child-awaits-');
    const url = await freshDatabase('child_awaits_state');
    const pool = await openDatabase(url, 4);
    try {
      const lines: string[] = [];
      const { editor, worker } = workerUntil(pool, dir, /run editor-1: waits for its sub-agent runs/, lines);
      await submitRun(pool, { agent: editor, task: 'Write two notes.', runId: 'editor-1' });
      await worker.run();
      const parent = await parentOf(pool);
      expect(parent.state, lines.join('\n')).toBe('awaitingDecision');
      expect(parent.loaded.header.version).toBe(JOURNAL_VERSION_CHILD_AWAITS);
      expect(parent.context.pending.map((call) => [call.id, call.needs])).toEqual([
        ['toolu_a', 'child'],
        ['toolu_b', 'child'],
      ]);
      expect(parent.context.awaiting?.tool_use_id).toBe('toolu_a');
      // Both children are queued by the first await: they run side by side while the parent waits for them in order.
      const queued = await pool.query<{ id: string; state: string }>(`SELECT id, state FROM da_runs WHERE id LIKE 'editor-1.%' ORDER BY id`);
      expect(queued.rows.map((row) => row.id)).toEqual(CHILDREN);
      const status = await runCliAsync(['status', '--database-url', url, '--json'], { cwd: dir });
      expect(status.code, status.stderr).toBe(0);
      const row = (JSON.parse(status.stdout) as Array<{ id: string; state: string; awaiting: string | null; waitsForRuns: string[] }>).find((run) => run.id === 'editor-1')!;
      expect([row.state, row.awaiting, row.waitsForRuns]).toEqual(['awaitingDecision', 'toolu_a', CHILDREN]);
      const store = new PgRunStore(pool, 'editor-1');
      await expect(decide(store, { tool_use_id: 'toolu_a', verdict: 'answered', text: 'I am the child', by: 'eve' })).rejects.toThrow(/waits for the sub-agent run it queued/);
      await decide(store, { tool_use_id: 'toolu_a', verdict: 'denied', reason: 'not needed any more', by: 'ana' });
      // Run everything to its end: the child goes on (its note written), the parent takes the person's word for toolu_a.
      const rest = workerUntil(pool, dir, null, lines);
      await rest.worker.run();
      const ended = await parentOf(pool);
      expect(ended.state, lines.join('\n')).toBe('done');
      expect(ended.context.finalText).toBe(`done: ${JSON.stringify('denied by a person: not needed any more')} / ${JSON.stringify('wrote "note B"')}`);
      expect(auditOf(dir)).toHaveLength(2);
    } finally {
      await pool.end();
    }
  }, 60_000);

  it("takes a child's end from its decisions, delivered once by the child's worker, and reads it from the child when that delivery was lost", async () => {
    const dir = tempDir('da-child-awaits-delivery-');
    const pool = await openDatabase(await freshDatabase('child_awaits_delivery'), 4);
    try {
      const lines: string[] = [];
      const { editor, worker } = workerUntil(pool, dir, /run editor-1\.toolu_b: done/, lines);
      await submitRun(pool, { agent: editor, task: 'Write two notes.', runId: 'editor-1' });
      await worker.run();
      const delivered = await pool.query<{ tool_use_id: string; decision: { verdict: string; by: string; text: string; child: unknown } }>(
        `SELECT tool_use_id, decision FROM da_decisions WHERE run_id = 'editor-1' ORDER BY tool_use_id`,
      );
      expect(delivered.rows.map((row) => [row.tool_use_id, row.decision.verdict, row.decision.by, row.decision.text, row.decision.child]), lines.join('\n')).toEqual([
        ['toolu_a', 'answered', 'sub-agent run editor-1.toolu_a', 'wrote "note A"', { runId: 'editor-1.toolu_a', state: 'done' }],
        ['toolu_b', 'answered', 'sub-agent run editor-1.toolu_b', 'wrote "note B"', { runId: 'editor-1.toolu_b', state: 'done' }],
      ]);
      // As if the children's worker was killed between each child's end and its delivery.
      await pool.query(`DELETE FROM da_decisions WHERE run_id = 'editor-1'`);
      const rest = workerUntil(pool, dir, null, lines);
      await rest.worker.run();
      const ended = await parentOf(pool);
      expect(ended.state, lines.join('\n')).toBe('done');
      expect(ended.context.finalText).toBe(`done: ${JSON.stringify('wrote "note A"')} / ${JSON.stringify('wrote "note B"')}`);
      expect(ended.context.decisions.map((decision) => [decision.tool_use_id, decision.by])).toEqual([
        ['toolu_a', 'sub-agent run editor-1.toolu_a'],
        ['toolu_b', 'sub-agent run editor-1.toolu_b'],
      ]);
      expect(auditOf(dir)).toHaveLength(2);
    } finally {
      await pool.end();
    }
  }, 60_000);

  it('resumes a parent recorded by the release before child awaits, stopped with its children queued, to its end', async () => {
    const dir = tempDir('da-child-awaits-legacy-');
    const pool = await openDatabase(await freshDatabase('child_awaits_legacy'), 4);
    try {
      const { migrate } = await import('../../src/store/pg/schema.ts');
      await migrate(pool);
      const fixture = fs.readFileSync(path.join(import.meta.dirname, '..', 'fixtures', 'legacy-fleet-parent.sql'), 'utf8');
      for (const statement of fixture.split('\n').filter((line) => line.startsWith('INSERT '))) await pool.query(statement);
      // The fixture was recorded on a day of its own: its calls' time to wait is moved to an hour from now.
      await pool.query(`UPDATE da_child_waits SET give_up_at = now() + interval '1 hour'`);
      const before = await parentOf(pool);
      expect([before.loaded.header.version, before.state, before.context.pending.map((call) => call.needs ?? null)]).toEqual([1, 'pendingTool', [null, null]]);
      const lines: string[] = [];
      const { worker } = workerUntil(pool, dir, null, lines);
      await worker.run();
      const ended = await parentOf(pool);
      expect(ended.state, lines.join('\n')).toBe('done');
      expect(ended.context.finalText).toBe(`done: ${JSON.stringify('wrote "note A"')} / ${JSON.stringify('wrote "note B"')}`);
      expect(auditOf(dir)).toHaveLength(2);
      expect(new Set(auditOf(dir)).size).toBe(2);
    } finally {
      await pool.end();
    }
  }, 60_000);
});
