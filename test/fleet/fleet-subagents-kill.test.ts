/**
 * A fleet parent whose children are driven by a worker process that is SIGKILLed: real worker
 * processes (`worker --agents FILE`, the module loaded with plain node) on a real PostgreSQL. The
 * first worker takes the parent, queues its two children and drives them; it is killed while a
 * child's note is written and not yet recorded. A second worker takes the children up once their
 * leases run out, each child's resume settles its open call by verify() (the note is there), and
 * the parent, taken up when both ended, finishes quoting both: two child runs, each note once.
 * And at each crash point, workers that SIGKILL themselves there (CRASH_AFTER: the first time any
 * run they drive passes it — the parent's or a child's), one after another: the runs of the tree
 * killed at that point in turn (a point that a resume passes again, as the model's reply, kills
 * the same run again), then a worker without the drill finishes: two child runs, each note once.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { listQueuedRuns as listRuns } from '../../src/fleet/run-queue.ts';
import { PgRunStore } from '../../src/store/pg/pg-store.ts';
import { foldJournal } from '../../src/store/journal/fold-journal.ts';
import { REPO, runCliAsync, startCli } from '../helpers/cli.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { freshDatabase, postgresAvailable, usePostgres, withDb } from '../helpers/use-postgres.ts';

const MODULE = path.join(REPO, 'test', 'fixtures', 'agents', 'editor-agents.mjs');
const CHILDREN = ['editor-1.toolu_a', 'editor-1.toolu_b'];
/** Enough to kill each of the tree's three runs at a point once, and one more. */
const MAX_KILLS = 4;

function audit(outbox: string): string[] {
  const file = path.join(outbox, 'audit.log');
  return fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n').filter(Boolean) : [];
}

describe.skipIf(!postgresAvailable())('a fleet parent whose children’s worker is killed', () => {
  usePostgres({ prefix: 'subagents_kill' });

  it('another worker takes the children up, each note is written once, and the parent finishes', async () => {
    const url = await freshDatabase();
    const outbox = tempDir();
    const env = { EDITOR_OUTBOX: outbox, EDITOR_PACE_MS: '1500' };
    const worker = () => startCli(['worker', '--database-url', url, '--agents', MODULE, '--lease', '1s', '--poll-interval', '100ms', '--run-concurrency', '3'], { cwd: tempDir(), env });
    const submitted = await runCliAsync(['submit', '--database-url', url, '--agent', 'editor', '--task', 'Write two notes.', '--run', 'editor-1', '--allow-unknown-agent'], { cwd: tempDir(), env });
    expect(submitted.code, submitted.stderr).toBe(0);

    const first = worker();
    // Killed while the children's notes are written and not yet recorded.
    await vi.waitFor(() => expect(audit(outbox).length === 2, `both children write their notes:\n${first.output()}`).toBe(true), { timeout: 60_000, interval: 25 });
    first.child.kill('SIGKILL');
    await first.done;
    // Both children were queued by the parent's one take-up, side by side (read from the database:
    // the worker's log line may be lost in its pipe with the SIGKILL).
    await withDb(url, async (db) => {
      const { rows } = await db.query<{ child_run_id: string }>('SELECT child_run_id FROM da_child_waits WHERE run_id = $1 ORDER BY child_run_id', ['editor-1']);
      expect(rows.map((row) => row.child_run_id)).toEqual(CHILDREN);
    });
    const second = worker();
    try {
      await withDb(url, async (db) => {
        await vi.waitFor(async () => expect((await listRuns(db)).find((run) => run.id === 'editor-1')?.state === 'done', `the parent is done:\n${second.output()}`).toBe(true), { timeout: 90_000, interval: 25 });
        const runs = await listRuns(db);
        expect(runs.map((run) => [run.id, run.state]).sort()).toEqual([['editor-1', 'done'], ...CHILDREN.map((id) => [id, 'done'])]);
        for (const id of CHILDREN) {
          const store = new PgRunStore(db, id);
          const loaded = await store.load();
          // The second worker's resume found the note's call open and settled it by verify(): the note was there.
          const settled = loaded.records.flatMap((stored) => (stored.record.note?.reconcile ? [stored.record.note.reconcile] : []));
          expect(settled.map((note) => [note.name, note.decision]), second.output()).toEqual([['write_note', 'verified-done']]);
          expect(foldJournal(store.location, loaded).state).toBe('done');
        }
        const parent = await new PgRunStore(db, 'editor-1').load();
        expect(foldJournal('editor-1', parent).context.finalText).toBe(`done: ${JSON.stringify('wrote "note A"')} / ${JSON.stringify('wrote "note B"')}`);
      });
      const lines = audit(outbox);
      expect(lines).toHaveLength(2);
      expect(new Set(lines.map((line) => line.split(' ')[0])).size).toBe(2);
      expect(lines.map((line) => line.split(' ').slice(1).join(' ')).sort()).toEqual(['note A', 'note B']);
    } finally {
      second.child.kill('SIGTERM');
      await second.done;
    }
  }, 120_000);

  // The points the tree passes: the parent's start and reply (children not queued yet), a child's
  // reply, its note returned and recorded, its turn's close, its end; then the parent's, once its children ended.
  it.each(['after-save-start:1', 'after-model-reply:1', 'after-save-a:1', 'after-tool-return:1', 'after-effect-write:1', 'after-save-b:1', 'after-save-done:1'])(
    'workers killed at %s one after another, then one without the drill: two child runs, each note once',
    async (point) => {
      const url = await freshDatabase();
      const outbox = tempDir();
      const env = { EDITOR_OUTBOX: outbox, EDITOR_PACE_MS: '0' };
      const submitted = await runCliAsync(['submit', '--database-url', url, '--agent', 'editor', '--task', 'Write two notes.', '--run', 'editor-1', '--allow-unknown-agent'], { cwd: tempDir(), env });
      expect(submitted.code, submitted.stderr).toBe(0);
      let kills = 0;
      const outputs: string[] = [];
      for (;;) {
        const armed = kills < MAX_KILLS ? { CRASH_AFTER: point } : {};
        const worker = await runCliAsync(['worker', '--database-url', url, '--agents', MODULE, '--lease', '1s', '--poll-interval', '50ms', '--run-concurrency', '3', '--exit-when-idle'], { cwd: tempDir(), env: { ...env, ...armed } });
        outputs.push(worker.stdout + worker.stderr);
        if (worker.signal !== 'SIGKILL') {
          expect(worker.code, outputs.join('\n---\n')).toBe(0);
          break;
        }
        kills += 1;
        expect(kills, outputs.join('\n---\n')).toBeLessThanOrEqual(MAX_KILLS);
      }
      expect(kills, outputs.join('\n---\n')).toBeGreaterThanOrEqual(1);
      await withDb(url, async (db) => {
        const runs = await listRuns(db);
        expect(runs.map((run) => [run.id, run.state]).sort(), outputs.join('\n---\n')).toEqual([['editor-1', 'done'], ...CHILDREN.map((id) => [id, 'done'])]);
        const parent = await new PgRunStore(db, 'editor-1').load();
        expect(foldJournal('editor-1', parent).context.finalText).toBe(`done: ${JSON.stringify('wrote "note A"')} / ${JSON.stringify('wrote "note B"')}`);
      });
      const lines = audit(outbox);
      expect(lines, point).toHaveLength(2);
      expect(new Set(lines.map((line) => line.split(' ')[0])).size).toBe(2);
    },
    120_000,
  );
});
