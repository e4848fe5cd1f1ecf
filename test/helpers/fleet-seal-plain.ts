/**
 * A fleet of plain runs to seal in (keys rotate --seal-plain on PostgreSQL), made by real worker
 * and CLI processes without keys: one finished (with a signal's data and a pause's reason waiting
 * in its inboxes), one waiting for a person (denied with a reason, not yet taken), one killed
 * mid-turn right after its side effect (its ledger entry not closed), and a plain schedule. And
 * what a person would read of it, and whether each run is wholly plain or wholly sealed.
 */
import { expect, vi } from 'vitest';
import { SAMPLE_NOTES, DEMO_TASK } from '../../src/demo/demo-task.ts';
import { registerAgents } from '../../src/fleet/agent-registry.ts';
import { scheduleRun } from '../../src/fleet/schedules.ts';
import { FLEET_DONE_TEXT } from '../../src/fleet/worker.ts';
import { isSealedRecord } from '../../src/seal/record-content.ts';
import { isSpecSealed } from '../../src/seal/spec-content.ts';
import { isSealedValue } from '../../src/seal/value-codec.ts';
import { PgRunStore } from '../../src/store/pg/pg-store.ts';
import type { Database } from '../../src/store/pg/pool.ts';
import { runCliAsync } from './cli.ts';
import { tempDir } from './temp-dir.ts';
import { withDb } from './use-postgres.ts';

export const cli = (args: string[], env?: Record<string, string | undefined>) =>
  runCliAsync(args, { cwd: tempDir(), env: { DURABLE_AGENT_KEYS: undefined, DURABLE_AGENT_KEY_FILE: undefined, ...env } });

/** A worker that drives what it can and exits when nothing is left a worker can do. */
export const worker = (url: string, env?: Record<string, string | undefined>) =>
  cli(['worker', '--database-url', url, '--lease-ms', '1500', '--poll-ms', '100', '--exit-when-idle'], env);

const NOTES_LINE = SAMPLE_NOTES.split('\n')[1]!.slice(2, 40);
export const REASON = 'the board must not read this draft';
const SIGNAL_DATA = 'paid by ACME Widgets Ltd';
const PAUSE_REASON = 'hold it for the auditors of ACME';
const SCHEDULE_TASK = 'Invoice Globex Corporation monthly';

/** Each holds a space, which no sealed value (base64url) does, so none is found in one by chance. */
export const SECRETS = [DEMO_TASK, NOTES_LINE, 'Counting the words', 'Writing the report', REASON, FLEET_DONE_TEXT, SIGNAL_DATA, PAUSE_REASON, SCHEDULE_TASK];

export interface PlainFleet {
  finished: string;
  waiting: string;
  midTurn: string;
}

async function submitDemo(url: string, extra: string[] = []): Promise<string> {
  const submitted = await cli(['submit', 'demo', '--database-url', url, ...extra]);
  expect(submitted.code, submitted.stderr).toBe(0);
  return submitted.stdout.trim();
}

/** The plain runs, all at rest and none leased (the killed worker's lease has expired). */
export async function makePlainFleet(url: string): Promise<PlainFleet> {
  const finished = await submitDemo(url);
  const waiting = await submitDemo(url, ['--require-approval', 'write_report']);
  const driven = await worker(url);
  expect(driven.code, driven.stderr).toBe(0);
  const midTurn = await submitDemo(url);
  const killed = await worker(url, { CRASH_AFTER: 'after-effect-write:3' });
  expect(killed.signal ?? killed.code).toBe('SIGKILL');
  // Denied once the worker that would take it up is gone: the decision waits in da_decisions, plain.
  const deny = await cli(['deny', '--database-url', url, '--run', waiting, 'toolu_03', '--reason', REASON]);
  expect(deny.code, deny.stderr).toBe(0);
  await withDb(url, async (db) => {
    await registerAgents(db, [{ name: 'billing', version: 'v1', tools: [] } as never], 'test-worker');
    await scheduleRun(db, { name: 'monthly', agent: 'billing', task: SCHEDULE_TASK, cron: '0 9 1 * *', catchUp: 0, overlap: 'allow' });
    const store = new PgRunStore(db, finished);
    await store.load();
    expect(await store.signals.send({ name: 'paid', id: 'p-1', data: { note: SIGNAL_DATA }, by: 'ana', at: Date.now() })).toEqual({ outcome: 'delivered' });
    expect(await store.control.write({ kind: 'pause', by: 'ana', reason: PAUSE_REASON, at: Date.now() })).toBe('written');
    // The killed worker's lease runs out: the run is no one's, as after a crash.
    await vi.waitFor(
      async () => {
        const { rows } = await db.query<{ live: boolean }>('SELECT lease_expires_at > now() AS live FROM da_runs WHERE id = $1', [midTurn]);
        expect(rows[0]!.live).not.toBe(true);
      },
      { timeout: 20_000, interval: 100 },
    );
  });
  return { finished, waiting, midTurn };
}

/**
 * How a run stands: 'plain' when nothing of it is sealed, 'sealed' when its row keeps a run key,
 * its header names it and its records, task and inbox entries with content are all sealed;
 * 'mixed' otherwise (what a sealing-in must never leave).
 */
export async function runSealing(db: Database, runId: string): Promise<'plain' | 'sealed' | 'mixed'> {
  const { rows } = await db.query<{ run_key: unknown; header: { sealed?: string } | null; spec: unknown }>('SELECT run_key, header, spec FROM da_runs WHERE id = $1', [runId]);
  const run = rows[0]!;
  const marks: boolean[] = [run.run_key !== null, run.header?.sealed !== undefined];
  if ((run.spec as { task?: unknown }).task !== undefined) marks.push(isSpecSealed(run.spec));
  const records = await db.query<{ body: string }>('SELECT body FROM da_records WHERE run_id = $1', [runId]);
  for (const { body } of records.rows) marks.push(isSealedRecord(JSON.parse(body) as object));
  const decisions = await db.query<{ entry: object }>('SELECT decision AS entry FROM da_decisions WHERE run_id = $1', [runId]);
  for (const { entry } of decisions.rows) marks.push(isSealedRecord(entry));
  const signals = await db.query<{ entry: { data: unknown } }>('SELECT signal AS entry FROM da_signals WHERE run_id = $1', [runId]);
  for (const { entry } of signals.rows) if (entry.data !== null) marks.push(isSealedValue(entry.data));
  const controls = await db.query<{ entry: { reason: unknown } }>("SELECT request AS entry FROM da_controls WHERE run_id = $1 AND kind <> 'raise'", [runId]);
  for (const { entry } of controls.rows) if (entry.reason !== null) marks.push(isSealedValue(entry.reason));
  if (marks.every((mark) => mark)) return 'sealed';
  if (marks.every((mark) => !mark)) return 'plain';
  return 'mixed';
}
