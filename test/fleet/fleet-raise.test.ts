/**
 * `durable-agent raise --run ID`, with real worker and CLI processes on a real PostgreSQL: a fleet
 * run stopped at its token budget (or its MAX_TURNS) is stopped, resumable, not finished; no
 * worker takes it up until the raise, which is refused (exit 2, nothing written) when it is not
 * larger or the run is not stopped at a limit; once raised, a worker takes it up through the
 * machine's REOPEN and finishes it, every tool effect once. Also: prune leaves a raised run
 * alone, and the schema's migration 5 → 6.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { demoScript, DEMO_TASK, ensureSampleNotes } from '../../src/demo/demo-task.ts';
import { demoTools } from '../../src/demo/demo-tools.ts';
import { pruneFleetRuns } from '../../src/fleet/prune-fleet.ts';
import { scriptedModel } from '../../src/model/scripted-model.ts';
import { pruneRuns } from '../../src/prune/prune-archive.ts';
import { startRun } from '../../src/runtime/run-api.ts';
import { FileStore } from '../../src/store/file-store.ts';
import type { QueuedRun } from '../../src/fleet/run-queue.ts';
import { foldJournal } from '../../src/store/journal/fold-journal.ts';
import { PgRunStore } from '../../src/store/pg/pg-store.ts';
import { openPool } from '../../src/store/pg/pool.ts';
import { migrate } from '../../src/store/pg/schema.ts';
import { runCliAsync } from '../helpers/cli.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { freshDatabase, pool, postgresAvailable, server, usePostgres, withDb } from '../helpers/use-postgres.ts';

const cli = (args: string[]) => runCliAsync(args, { cwd: tempDir() });
const workerArgs = (url: string) => ['worker', '--database-url', url, '--lease', '1500ms', '--poll-interval', '100ms', '--exit-when-idle'];

async function migrated(): Promise<string> {
  const url = await freshDatabase();
  const done = await cli(['db', 'migrate', '--database-url', url]);
  expect(done.code, done.stderr).toBe(0);
  return url;
}

async function submit(url: string, extra: string[]): Promise<string> {
  const submitted = await cli(['submit', 'demo', '--database-url', url, ...extra]);
  expect(submitted.code, submitted.stderr).toBe(0);
  return submitted.stdout.trim();
}

async function work(url: string) {
  const worked = await cli(workerArgs(url));
  expect(worked.code, worked.stderr).toBe(0);
  return worked.stdout;
}

/** The run's row, its controls, its journal folded, and what its tools did to the world. */
async function runOf(url: string, id: string) {
  return withDb(url, async (db) => {
    const { rows } = await db.query<{ state: string; finished: boolean; records: number }>('SELECT state, finished, records FROM da_runs WHERE id = $1', [id]);
    const controls = await db.query<{ kind: string }>('SELECT kind FROM da_controls WHERE run_id = $1 ORDER BY kind', [id]);
    const audits = await db.query<{ n: string }>('SELECT count(*) AS n FROM demo_report_audit WHERE run_id = $1', [id]);
    const loaded = await new PgRunStore(db, id).load();
    const records = loaded.records.map((stored) => stored.record);
    return { ...rows[0]!, controls: controls.rows.map((row) => row.kind), reportWrites: Number(audits.rows[0]!.n), records, view: foldJournal(id, loaded) };
  });
}

async function listed(url: string, id: string): Promise<QueuedRun> {
  const status = await cli(['status', '--database-url', url, '--json']);
  expect(status.code, status.stderr).toBe(0);
  return (JSON.parse(status.stdout) as QueuedRun[]).find((run) => run.id === id)!;
}

/** Each call of the run has one outcome recorded, and each reached the ledger once (nothing run again). */
function everyCallOnce(records: Awaited<ReturnType<typeof runOf>>['records']): string[] {
  const recorded = records.flatMap((record) => (record.results?.add ?? []).map((outcome) => outcome.tool_use_id));
  expect(recorded).toEqual([...new Set(recorded)]);
  return recorded;
}

describe.skipIf(!postgresAvailable())('raising the limits of a fleet run stopped at one', () => {
  usePostgres({ prefix: 'raise' });

  it('stopped at its token budget: stopped, resumable in status; refusals write nothing; raised, a worker takes it up and finishes it, each effect once', async () => {
    const url = await migrated();
    // The first reply's tokens reach it: the run stops after its first call, before write_report.
    const id = await submit(url, ['--max-total-tokens', '100']);
    expect(await work(url)).toContain(`run ${id}: stoppedAtBudget; stopped, resumable: durable-agent raise --run ${id} gives it more`);
    const stopped = await runOf(url, id);
    expect(stopped).toMatchObject({ state: 'stoppedAtBudget', finished: false, controls: [], reportWrites: 0 });
    const used = stopped.view.context.budgetStop!.spent;
    expect(stopped.view.context.budgetStop).toMatchObject({ budget: 'tokens', limit: 100 });
    expect(used).toBeGreaterThanOrEqual(100);
    const callsBefore = everyCallOnce(stopped.records);

    // Stopped, resumable: not finished, and no worker takes it up by itself.
    const status = await cli(['status', '--database-url', url]);
    expect(status.stdout).toMatch(new RegExp(`${id} +stoppedAtBudget \\(stopped, resumable: raise --run ID\\)`));
    expect(status.stdout).toContain('1 runs: 0 done, 1 unfinished');
    expect(status.stdout).toContain('1 stopped at their budget (resumable: raise --run ID gives one more)');
    expect(await listed(url, id)).toMatchObject({ state: 'stoppedAtBudget', finished: false, stoppedAtLimit: true, raise: null });
    expect(await work(url)).not.toContain(`run ${id}: claimed`);

    // Refused, exit 2, nothing written: not larger, still reached, not the limit it stopped at, a limit it does not have, no limit at all.
    const refusals: Array<[string[], string]> = [
      [['--max-total-tokens', '100'], `Fleet run ${id} has a token budget of 100 tokens (--max-total-tokens), ${used.toLocaleString('en-US')} tokens used: --max-total-tokens 100 tokens is not larger.`],
      [['--max-total-tokens', '50'], '--max-total-tokens 50 tokens is not larger'],
      [['--max-total-tokens', String(used)], 'would still be reached, and the run would stop again at once'],
      [['--max-turns', '30'], 'and stopped there: a raise must give that limit more (--max-total-tokens)'],
      [['--max-cost-usd', '5'], 'has no cost budget: a raise only raises a limit the run has'],
      [[], 'raise needs the limit to raise'],
    ];
    for (const [flags, words] of refusals) {
      const refused = await cli(['raise', '--database-url', url, '--run', id, ...flags]);
      expect(refused.code, `${flags.join(' ')}: ${refused.stderr}`).toBe(2);
      expect(refused.stderr).toContain(words);
    }
    const suggested = await cli(['raise', '--database-url', url, '--run', id, '--max-total-tokens', '100']);
    expect(suggested.stderr).toContain(`Give a larger one, e.g. durable-agent raise --run ${id} --max-total-tokens ${Math.max(200, used + 1)}. Nothing was written.`);
    const unchanged = await runOf(url, id);
    expect(unchanged.controls).toEqual([]);
    expect(unchanged.records).toEqual(stopped.records);

    // Raised: durable before the command returns; status shows it; a second raise waits its turn.
    const raised = await cli(['raise', '--database-url', url, '--run', id, '--max-total-tokens', '100000', '--by', 'ana']);
    expect(raised.code, raised.stderr).toBe(0);
    expect(raised.stdout).toContain(`[raise] fleet run ${id} (stoppedAtBudget, turn 1) raised: --max-total-tokens 100000 by ana at `);
    expect((await runOf(url, id)).controls).toEqual(['raise']);
    expect((await cli(['status', '--database-url', url])).stdout).toMatch(new RegExp(`${id} +stoppedAtBudget \\(raised: --max-total-tokens 100000 by ana at [^;]+; to be taken up\\)`));
    expect(await listed(url, id)).toMatchObject({ stoppedAtLimit: true, raise: { kind: 'raise', by: 'ana', budget: { maxTotalTokens: 100_000 } } });
    const again = await cli(['raise', '--database-url', url, '--run', id, '--max-total-tokens', '200000']);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain(`Fleet run ${id} was raised already (--max-total-tokens 100000 by ana`);

    // Taken up: the REOPEN from where it stopped, then on to the end; the raise consumed with it.
    const worked = await work(url);
    expect(worked).toContain(`run ${id}: claimed (lease epoch 2), resuming with the limits raised (--max-total-tokens 100000 by ana`);
    expect(worked).toContain(`run ${id}: reopened from stoppedAtBudget with the raise by ana: goes on from where it stopped`);
    expect(worked).toContain(`run ${id}: done: Report stored in demo_reports, task complete.`);
    expect(worked).not.toContain('reconcile');
    expect(worked).not.toContain('[ALERT]');
    const done = await runOf(url, id);
    expect(done).toMatchObject({ state: 'done', finished: true, controls: [], reportWrites: 1 });
    expect(done.records.slice(0, stopped.records.length)).toEqual(stopped.records);
    const reopen = done.records[stopped.records.length]!;
    expect(reopen).toMatchObject({ event: 'REOPEN', state: 'awaitingModel', note: { reopened: { previousState: 'stoppedAtBudget' } } });
    expect(done.records.filter((record) => record.event === 'REOPEN')).toHaveLength(1);
    expect(done.view.context.budget).toEqual({ maxTotalTokens: 100_000 });
    // Every call once: the ones before the stop kept, not one of them run again.
    const callsAfter = everyCallOnce(done.records);
    expect(callsAfter.slice(0, callsBefore.length)).toEqual(callsBefore);
    expect(callsAfter.length).toBeGreaterThan(callsBefore.length);

    expect((await cli(['status', '--database-url', url])).stdout).toMatch(new RegExp(`${id} +done `));
    const finished = await cli(['raise', '--database-url', url, '--run', id, '--max-total-tokens', '900000']);
    expect(finished.code).toBe(2);
    expect(finished.stderr).toContain(`Fleet run ${id} is not stopped at a limit: it is finished (done, turn 3)`);
    expect((await runOf(url, id)).controls).toEqual([]);
  });

  it('stopped at MAX_TURNS: raise --max-turns takes it up with its held reply; a run not stopped (queued, unfinished) is refused, nothing written', async () => {
    const url = await migrated();
    const id = await submit(url, ['--max-turns', '1']);
    expect(await work(url)).toContain(`run ${id}: stoppedAtMaxTurns`);
    const stopped = await runOf(url, id);
    expect(stopped).toMatchObject({ state: 'stoppedAtMaxTurns', finished: false, reportWrites: 0 });
    expect(stopped.view.context.heldReply).not.toBeNull();
    expect((await cli(['status', '--database-url', url])).stdout).toContain('1 stopped at MAX_TURNS (resumable: raise --run ID gives one more)');

    const notLarger = await cli(['raise', '--database-url', url, '--run', id, '--max-turns', '1']);
    expect(notLarger.code).toBe(2);
    expect(notLarger.stderr).toContain(`Fleet run ${id} has a turn limit of 1 turn (--max-turns), 1 turn used: --max-turns 1 turn is not larger. Give a larger one, e.g. durable-agent raise --run ${id} --max-turns 11.`);
    const queued = await submit(url, ['--pace', '1m']);
    const refusedQueued = await cli(['raise', '--database-url', url, '--run', queued, '--max-turns', '50']);
    expect(refusedQueued.code).toBe(2);
    expect(refusedQueued.stderr).toContain(`Fleet run ${queued} is not stopped at a limit: no worker has started it yet`);
    expect(await withDb(url, async (db) => (await db.query('SELECT 1 FROM da_controls')).rowCount)).toBe(0);
    await withDb(url, (db) => db.query('DELETE FROM da_runs WHERE id = $1', [queued]));

    expect((await cli(['raise', '--database-url', url, '--run', id, '--max-turns', '5'])).code).toBe(0);
    const worked = await work(url);
    expect(worked).toContain(`run ${id}: reopened from stoppedAtMaxTurns`);
    expect(worked).toContain(`run ${id}: done: Report stored in demo_reports, task complete.`);
    const done = await runOf(url, id);
    expect(done).toMatchObject({ state: 'done', controls: [], reportWrites: 1 });
    expect(done.view.context.maxTurns).toBe(5);
    // The held reply was acted on, not asked for again: every reply but that one came from a model call (its MODEL_USAGE).
    const count = (event: string) => done.records.filter((record) => record.event === event).length;
    expect(count('MODEL_USAGE')).toBe(count('MODEL_REPLY') - 1);
    expect(done.records.slice(0, stopped.records.length)).toEqual(stopped.records);
    everyCallOnce(done.records);
  });

  it('prune: a run stopped at a limit goes when the rule says it is old enough, a raised one never; a file run stopped at a limit by the same rule', async () => {
    const url = await migrated();
    const kept = await submit(url, ['--max-total-tokens', '1']);
    const old = await submit(url, ['--max-total-tokens', '1']);
    await work(url);
    expect((await cli(['raise', '--database-url', url, '--run', kept, '--max-total-tokens', '50000'])).code).toBe(0);
    await withDb(url, async (db) => {
      expect((await pruneFleetRuns(db, { keep: 5 })).removed).toEqual([]);
      const report = await pruneFleetRuns(db, { olderThanMs: 0 });
      expect(report.removed.map((run) => [run.id, run.state])).toEqual([[old, 'stoppedAtBudget']]);
      expect((await db.query('SELECT id FROM da_runs')).rows).toEqual([{ id: kept }]);
    });
    // A file run stopped at its budget and moved to the archive by a fresh start: the same rule takes it.
    const dir = tempDir('da-raise-prune-');
    ensureSampleNotes(dir);
    const store = () => new FileStore(path.join(dir, '.durable-agent'));
    const parts = () => ({ store: store(), model: scriptedModel(demoScript()), tools: demoTools(dir), task: DEMO_TASK, budget: { maxTotalTokens: 1 } });
    expect((await startRun(parts())).status).toBe('stoppedAtBudget');
    expect((await startRun({ ...parts(), fresh: true })).status).toBe('stoppedAtBudget');
    expect((await pruneRuns(store(), { keep: 5 })).removed).toEqual([]);
    expect((await pruneRuns(store(), { olderThanMs: 0 })).removed.map((run) => run.state)).toEqual(['stoppedAtBudget']);
  });

  it('migrates a schema at version 5 to 6: runs stopped at a limit become resumable, archived ones stay as they were; raise requests are allowed', async () => {
    const name = `raise_migration`;
    await pool.query(`CREATE DATABASE ${name}`);
    const db = openPool(server.url.replace(/\/postgres$/, `/${name}`), 2);
    try {
      expect(await migrate(db, 5)).toEqual({ from: 0, to: 5 });
      await db.query(
        `INSERT INTO da_runs (id, spec, state, finished) VALUES
           ('stopped', '{}', 'stoppedAtBudget', true), ('at-turns', '{}', 'stoppedAtMaxTurns', true),
           ('done', '{}', 'done', true), ('stopped~archived~2026', '{}', 'stoppedAtBudget', true)`,
      );
      await expect(db.query(`INSERT INTO da_controls (run_id, kind, request) VALUES ('stopped', 'raise', '{}')`)).rejects.toThrow(/da_controls_kind_check/);
      expect(await migrate(db, 6)).toEqual({ from: 5, to: 6 });
      expect(await migrate(db, 6)).toEqual({ from: 6, to: 6 });
      const { rows } = await db.query<{ id: string; finished: boolean }>('SELECT id, finished FROM da_runs ORDER BY id');
      expect(rows).toEqual([
        { id: 'at-turns', finished: false },
        { id: 'done', finished: true },
        { id: 'stopped', finished: false },
        { id: 'stopped~archived~2026', finished: true },
      ]);
      await db.query(`INSERT INTO da_controls (run_id, kind, request) VALUES ('stopped', 'raise', '{}')`);
      const triggers = await db.query<{ tgname: string }>(`SELECT tgname FROM pg_trigger WHERE tgname LIKE 'da\\_%' ORDER BY tgname`);
      expect(triggers.rows.map((r) => r.tgname)).toEqual(['da_controls_cleared', 'da_controls_raised', 'da_decisions_given', 'da_runs_queued', 'da_runs_released']);
    } finally {
      await db.end();
    }
  });
});
