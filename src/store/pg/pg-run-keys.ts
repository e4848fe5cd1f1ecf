/**
 * A sealed fleet run's wrapped data key, kept in its row (da_runs.run_key, schema step 17) rather
 * than in its records: a rotation rewrites one small value per run, and setting it to null leaves
 * the run's content unreadable for good (crypto-shredding) while its records stay whole.
 *
 * The key is written before the run's first record, fenced by the writer's lease, and only where
 * none is kept: a run submitted sealed has its key from the submit (its task is sealed with it).
 */
import { type WrappedRunKey, masterKeyIdOf, rewrapRunKey } from '../../seal/envelope.ts';
import type { MasterKeys } from '../../seal/keys.ts';
import { SealedValueError } from '../../seal/seal-errors.ts';
import { openSubmittedSpec } from '../../seal/spec-content.ts';
import { RunKeyMissingError, RunNotSealedError, StoreMissingError, StoreWriteError } from '../errors.ts';
import type { RunKeyPlace } from '../run-sealing.ts';
import { LeaseLostError } from './pg-errors.ts';
import type { Database } from './pool.ts';
import { readScheduleKeys, replaceScheduleKey } from './schedules.ts';
import { inTransaction } from './transaction.ts';

/** Where a fleet run's key is said to be kept, in messages. */
export function runKeyColumnOf(fleetRun: string): string {
  return `da_runs.run_key of run ${fleetRun}`;
}

/** The run key kept in a fleet run's row, as the place RunSealing keeps the key of the run a PgRunStore holds. */
export function pgRunKeyPlace(db: Database, fleetRun: string, lease: () => { epoch: number } | null): RunKeyPlace {
  return {
    read: () => readPgRunKey(db, fleetRun),
    write: async (_runId, wrapped) => {
      const held = lease();
      if (!held) throw new Error(`The run key of ${fleetRun} was to be kept without a lease: call lock() first or pass the worker's lease`);
      let written: number | null;
      try {
        ({ rowCount: written } = await db.query('UPDATE da_runs SET run_key = $2 WHERE id = $1 AND lease_epoch = $3 AND run_key IS NULL', [
          fleetRun,
          JSON.stringify(wrapped),
          held.epoch,
        ]));
      } catch (error) {
        throw new StoreWriteError(`PostgreSQL run ${fleetRun}`, 'the run key', error);
      }
      if (written !== 1) throw new LeaseLostError(fleetRun, held.epoch, null, null);
    },
    missing: (runId, keyId) => new RunKeyMissingError(runId, keyId, runKeyColumnOf(fleetRun)),
    keptBeforeCreate: true,
  };
}

/**
 * A fleet run's spec with its task opened when it was submitted sealed (spec-content.ts): with
 * the master keys given, else a KeyNotGivenError naming the key; a shredded run's is refused.
 */
export function openFleetSpec<S extends object>(db: Database, fleetRun: string, spec: S, keys: () => Promise<MasterKeys | null>): Promise<S> {
  return openSubmittedSpec(spec, fleetRun, {
    wrapped: () => readPgRunKey(db, fleetRun),
    keys,
    missing: (keyId) => new RunKeyMissingError(fleetRun, keyId, runKeyColumnOf(fleetRun)),
  });
}

/** The wrap kept in the run's row, or null (a plain run, a shredded one, or no such run). */
export async function readPgRunKey(db: Database, fleetRun: string): Promise<WrappedRunKey | null> {
  const { rows } = await db.query<{ run_key: unknown }>('SELECT run_key FROM da_runs WHERE id = $1', [fleetRun]);
  return checkedWrap(rows[0]?.run_key ?? null, fleetRun);
}

/** A run's wrap as its row keeps it, checked: null for none; a value this release does not read as one is refused (SealedValueError). */
export function checkedRunKey(wrapped: unknown, fleetRun: string): WrappedRunKey {
  const checked = checkedWrap(wrapped, fleetRun);
  if (checked === null) throw new SealedValueError('run key', fleetRun, null, `${runKeyColumnOf(fleetRun)} is empty`);
  return checked;
}

/** The wrap in a run_key column as read with the run's row (load reads it with the header), or null. */
export function checkedWrap(wrapped: unknown, fleetRun: string): WrappedRunKey | null {
  if (wrapped === null) return null;
  if (masterKeyIdOf(wrapped) === null) throw new SealedValueError('run key', fleetRun, null, `${runKeyColumnOf(fleetRun)} is not a wrapped run key this release reads`);
  return wrapped as WrappedRunKey;
}

/**
 * Crypto-shreds a sealed fleet run: sets its wrapped run key to null, so its content can never be
 * opened again by anyone, with any key; its row and records stay (list and status still read
 * them). Refused for a plain run, and for a run already shredded.
 */
export async function shredPgRun(db: Database, fleetRun: string): Promise<{ runId: string; keyId: string }> {
  const { rows } = await db.query<{ sealed: string | null; run_key: unknown }>("SELECT header ->> 'sealed' AS sealed, run_key FROM da_runs WHERE id = $1", [fleetRun]);
  const row = rows[0];
  if (!row) throw new StoreMissingError(`PostgreSQL run ${fleetRun}`, 'read');
  const wrapped = checkedWrap(row.run_key, fleetRun);
  if (wrapped === null && row.sealed === null) throw new RunNotSealedError(fleetRun, 'the fleet (da_runs)');
  if (wrapped === null) throw new RunKeyMissingError(fleetRun, row.sealed!, runKeyColumnOf(fleetRun));
  const { rowCount } = await db.query('UPDATE da_runs SET run_key = NULL WHERE id = $1 AND run_key IS NOT NULL', [fleetRun]);
  if (rowCount !== 1) throw new RunKeyMissingError(fleetRun, wrapped.key, runKeyColumnOf(fleetRun));
  return { runId: fleetRun, keyId: wrapped.key };
}

/** What a rotation of the fleet did: the runs whose key was wrapped again, those already under the sealing key, those it could not open. */
export interface PgRotationReport {
  rewrapped: string[];
  unchanged: number;
  failed: Array<{ runId: string; error: Error }>;
}

export const ROTATION_BATCH = 200;

/**
 * Wraps every kept run key of the fleet again under the sealing master key (the first of the keys
 * given), opened with any of them, a batch of runs at a time in one short transaction: a kill at
 * any instant leaves each key under its old master key or its new one, both given, and run
 * again, a rotation redoes nothing it finished. A key is replaced only where it is still the one
 * read, so a run shredded meanwhile stays shredded. The run keys themselves do not change, so a
 * run in flight goes on writing. `onBatch` is told each committed batch (drills kill there).
 */
export async function rotatePgRunKeys(
  db: Database,
  keys: MasterKeys,
  options: { batch?: number; onBatch?: (rewrapped: number) => void } = {},
): Promise<PgRotationReport> {
  const report: PgRotationReport = { rewrapped: [], unchanged: 0, failed: [] };
  const batch = options.batch ?? ROTATION_BATCH;
  let after = '';
  for (;;) {
    const { rows } = await db.query<{ id: string; run_key: unknown }>(
      'SELECT id, run_key FROM da_runs WHERE run_key IS NOT NULL AND id COLLATE "C" > $1 ORDER BY id COLLATE "C" LIMIT $2',
      [after, batch],
    );
    if (rows.length === 0) return report;
    after = rows[rows.length - 1]!.id;
    const next: Array<{ id: string; before: unknown; wrapped: WrappedRunKey }> = [];
    for (const row of rows) {
      try {
        const rewrapped = await rewrapRunKey(row.run_key, keys, keys, row.id);
        if (rewrapped.changed) next.push({ id: row.id, before: row.run_key, wrapped: rewrapped.wrapped });
        else report.unchanged++;
      } catch (error) {
        report.failed.push({ runId: row.id, error: error as Error });
      }
    }
    if (next.length === 0) continue;
    const written = await inTransaction(db, async (client) => {
      const { rows: updated } = await client.query<{ id: string }>(
        `UPDATE da_runs r SET run_key = x.wrapped
           FROM unnest($1::text[], $2::jsonb[], $3::jsonb[]) AS x(id, before, wrapped)
          WHERE r.id = x.id AND r.run_key = x.before
          RETURNING r.id`,
        [next.map((n) => n.id), next.map((n) => JSON.stringify(n.before)), next.map((n) => JSON.stringify(n.wrapped))],
      );
      return updated.map((row) => row.id);
    });
    report.rewrapped.push(...written.sort());
    options.onBatch?.(written.length);
  }
}

/** The wraps kept in these runs' rows, in one query (a run with none, or no row, is absent). */
export async function readPgRunKeysOf(db: Database, fleetRuns: readonly string[]): Promise<Map<string, WrappedRunKey>> {
  if (fleetRuns.length === 0) return new Map();
  const { rows } = await db.query<{ id: string; run_key: unknown }>('SELECT id, run_key FROM da_runs WHERE id = ANY($1::text[]) AND run_key IS NOT NULL', [fleetRuns]);
  return new Map(rows.map((row) => [row.id, checkedWrap(row.run_key, row.id)!]));
}

/** What a rotation of the sealed schedules' keys did (da_schedules.task_key). */
export interface PgScheduleRotationReport {
  rewrapped: string[];
  unchanged: number;
  failed: Array<{ schedule: string; error: Error }>;
}

/**
 * Wraps the key of every sealed schedule again under the sealing master key, as a rotation does
 * a run's: one small value each, replaced only where it is still the one read (a schedule removed
 * or added again meanwhile is left as it is), so a rotation run again redoes nothing it finished.
 * Schedules are few: one statement each.
 */
export async function rotatePgScheduleKeys(db: Database, keys: MasterKeys): Promise<PgScheduleRotationReport> {
  const report: PgScheduleRotationReport = { rewrapped: [], unchanged: 0, failed: [] };
  for (const { name, task_key } of await readScheduleKeys(db)) {
    try {
      const rewrapped = await rewrapRunKey(task_key, keys, keys, name);
      if (!rewrapped.changed) report.unchanged++;
      else if (await replaceScheduleKey(db, name, task_key, rewrapped.wrapped)) report.rewrapped.push(name);
    } catch (error) {
      report.failed.push({ schedule: name, error: error as Error });
    }
  }
  return report;
}
