/**
 * `keys rotate --seal-plain` on a fleet: the plain runs of the database sealed in. A run started
 * without keys stays plain until this is asked for; then it gets a run key (made and wrapped with
 * the first master key, as a submit with keys makes one) and everything a run started sealed keeps
 * sealed is written again sealed: its records (the snapshot links computed over the sealed
 * bodies), its submitted task, the decisions and answers in da_decisions, the data of its signals
 * in da_signals and the reasons of its cancel and pause requests in da_controls. What finds and
 * operates runs (state, turn, times, tool names, call ids, usage) stays readable, as for any
 * sealed run.
 *
 * Each run is sealed in one transaction that holds its row for update, so a kill at any instant
 * leaves it wholly plain or wholly sealed, and a rotation run again takes the runs still plain.
 * A run whose lease a live worker holds is left plain and reported; any other lease is ended (its
 * epoch moved on, as a claim does), so a worker that held an expired one writes nothing more. An
 * entry sent to the run meanwhile waits for the row (keptAsRunIs in pg-keyed-inbox.ts) and goes in
 * sealed, or is refused without the key: no plain row lands in a run just sealed.
 */
import type { PoolClient } from 'pg';
import { createRunKey, type RunKey, type WrappedRunKey } from '../../seal/envelope.ts';
import type { MasterKeys } from '../../seal/keys.ts';
import { isSealedRecord, sealDecisionContent, sealRecordContent } from '../../seal/record-content.ts';
import { sealScheduleTask, sealSpecTask } from '../../seal/spec-content.ts';
import { sealerFor } from '../../seal/value-codec.ts';
import { RunLockedError, StoreCorruptError } from '../errors.ts';
import { checksumOf, documentJson } from '../journal/framing.ts';
import { JOURNAL_VERSION_SEALED, type JournalHeader, type JournalRecord } from '../journal/journal-record.ts';
import { sealedControlRequest } from './pg-control-inbox.ts';
import { sealedSignal } from './pg-signal-inbox.ts';
import type { Database } from './pool.ts';
import { inTransaction } from './transaction.ts';

/** How many runs are looked up at a time (each is sealed in a transaction of its own). */
export const SEAL_IN_BATCH = 100;

/** What sealing in the fleet did. */
export interface PgSealInReport {
  /** Plain runs now sealed, by id. */
  sealed: string[];
  /** Runs a live worker holds: left plain, for a later rotation. */
  held: Array<{ runId: string; error: RunLockedError }>;
  failed: Array<{ runId: string; error: Error }>;
  /** Plain schedules whose task is now sealed under a key of their own. */
  schedules: string[];
  schedulesFailed: Array<{ schedule: string; error: Error }>;
}

/** A run is plain when it has no run key and neither its header nor its task says it is sealed (a shredded run has neither key nor plain content). */
const PLAIN = `run_key IS NULL AND (header IS NULL OR NOT header ? 'sealed') AND NOT coalesce(spec ->> 'task' LIKE 'sealed:%', false)`;

/** The part of an archived run's id its live run had: its inbox entries and its task were sealed for that id. */
function liveIdOf(fleetRun: string): string {
  const at = fleetRun.indexOf('~archived~');
  return at === -1 ? fleetRun : fleetRun.slice(0, at);
}

/**
 * Seals in every plain run of the fleet, a batch of ids at a time, each run in one transaction
 * (see the top of this file); then the plain schedules. `onRun` is told each run committed sealed.
 */
export async function sealPlainPgRuns(db: Database, keys: MasterKeys, options: { batch?: number; onRun?: (runId: string) => void } = {}): Promise<PgSealInReport> {
  const report: PgSealInReport = { sealed: [], held: [], failed: [], schedules: [], schedulesFailed: [] };
  const batch = options.batch ?? SEAL_IN_BATCH;
  let after = '';
  for (;;) {
    const { rows } = await db.query<{ id: string }>(`SELECT id FROM da_runs WHERE ${PLAIN} AND id COLLATE "C" > $1 ORDER BY id COLLATE "C" LIMIT $2`, [after, batch]);
    if (rows.length === 0) break;
    after = rows[rows.length - 1]!.id;
    for (const { id } of rows) {
      try {
        // Made before the run's row is held: a keys hook may take a while, and the run waits for no one meanwhile.
        const key = await createRunKey(keys);
        const outcome = await inTransaction(db, (client) => sealInRun(client, id, key));
        if (outcome === 'sealed') {
          report.sealed.push(id);
          options.onRun?.(id);
        } else if (outcome instanceof RunLockedError) report.held.push({ runId: id, error: outcome });
      } catch (error) {
        report.failed.push({ runId: id, error: error as Error });
      }
    }
  }
  await sealPlainSchedules(db, keys, report);
  return report;
}

/** One run, in the transaction given: 'sealed', 'unchanged' (sealed or gone meanwhile), or the lease that holds it. */
async function sealInRun(client: PoolClient, fleetRun: string, { runKey, wrapped }: { runKey: RunKey; wrapped: WrappedRunKey }): Promise<'sealed' | 'unchanged' | RunLockedError> {
  const { rows } = await client.query<{ spec: Record<string, unknown>; header: JournalHeader | null; records: number; lease_owner: string | null; lease_expires_at: Date | null; live: boolean }>(
    `SELECT spec, header, records, lease_owner, lease_expires_at, coalesce(lease_owner IS NOT NULL AND lease_expires_at > now(), false) AS live
       FROM da_runs WHERE id = $1 AND ${PLAIN} FOR UPDATE`,
    [fleetRun],
  );
  const run = rows[0];
  if (!run) return 'unchanged';
  if (run.live) {
    return new RunLockedError(
      `PostgreSQL run ${fleetRun}`,
      `${run.lease_owner}, lease until ${run.lease_expires_at?.toISOString() ?? '?'}`,
      'It is left plain: run keys rotate --seal-plain again once its worker lets it go.',
    );
  }
  const liveId = liveIdOf(fleetRun);
  const values = sealerFor(runKey, liveId);
  let header: JournalHeader | null = null;
  if (run.header !== null) {
    header = { ...run.header, version: Math.max(run.header.version, JOURNAL_VERSION_SEALED), sealed: runKey.id };
    await sealRecords(client, fleetRun, run.header.runId, run.records, runKey);
  }
  const { rows: inbox } = await client.query<{ place: 'decision' | 'signal' | 'control'; key: string; entry: Record<string, unknown> }>(
    `SELECT 'decision' AS place, tool_use_id AS key, decision AS entry FROM da_decisions WHERE run_id = $1
     UNION ALL SELECT 'signal', seq::text, signal FROM da_signals WHERE run_id = $1
     UNION ALL SELECT 'control', kind, request FROM da_controls WHERE run_id = $1 AND kind IN ('cancel', 'pause')`,
    [fleetRun],
  );
  const sealedEntries = inbox
    .filter((row) => row.entry !== null && typeof row.entry === 'object' && !isSealedRecord(row.entry))
    .map((row) => {
      const entry =
        row.place === 'decision'
          ? sealDecisionContent(row.entry, values)
          : row.place === 'signal'
            ? sealedSignal(row.entry as { name: string; data: unknown }, values)
            : sealedControlRequest(row.entry as { kind: string; reason: string | null }, values);
      return { ...row, entry };
    })
    .filter((row) => isSealedRecord(row.entry));
  if (sealedEntries.length > 0) {
    await client.query(
      `WITH x AS (SELECT * FROM unnest($2::text[], $3::text[], $4::jsonb[]) AS x(place, key, entry)),
            d AS (UPDATE da_decisions t SET decision = x.entry FROM x WHERE x.place = 'decision' AND t.run_id = $1 AND t.tool_use_id = x.key),
            s AS (UPDATE da_signals t SET signal = x.entry FROM x WHERE x.place = 'signal' AND t.run_id = $1 AND t.seq = x.key::bigint)
       UPDATE da_controls t SET request = x.entry FROM x WHERE x.place = 'control' AND t.run_id = $1 AND t.kind = x.key`,
      [fleetRun, sealedEntries.map((row) => row.place), sealedEntries.map((row) => row.key), sealedEntries.map((row) => JSON.stringify(row.entry))],
    );
  }
  // The lease's epoch moves on, as a claim's does: a worker that held one (expired) writes nothing more to the run.
  await client.query(
    `UPDATE da_runs SET run_key = $2::jsonb, header = coalesce($3::jsonb, header), spec = $4::jsonb,
            lease_epoch = lease_epoch + 1, lease_owner = NULL, lease_expires_at = NULL
      WHERE id = $1`,
    [fleetRun, JSON.stringify(wrapped), header === null ? null : JSON.stringify(header), JSON.stringify(sealSpecTask(run.spec, liveId, runKey))],
  );
  return 'sealed';
}

/**
 * The run's records sealed as a run started with this key would have stored them: each record's
 * content sealed for the journal's run id, and each snapshot linked to the checksum of the sealed
 * body before it (a resume from the snapshot checks that link).
 */
async function sealRecords(client: PoolClient, fleetRun: string, journalRun: string, count: number, runKey: RunKey): Promise<void> {
  const { rows } = await client.query<{ seq: number; body: string }>('SELECT seq, body FROM da_records WHERE run_id = $1 ORDER BY seq', [fleetRun]);
  const location = `PostgreSQL run ${fleetRun}`;
  if (rows.length !== count) {
    throw new StoreCorruptError(location, rows.length, rows.length, `the run counts ${count} records but ${rows.length} are stored`, 'rows-missing', 'Restore the database from a backup; nothing was changed.');
  }
  const sealer = sealerFor(runKey, journalRun);
  const bodies: string[] = [];
  let before: { seq: number; crc: string } | null = null;
  for (const [index, row] of rows.entries()) {
    let record: JournalRecord;
    try {
      record = JSON.parse(row.body) as JournalRecord;
    } catch (error) {
      throw new StoreCorruptError(location, index, row.seq, `record ${row.seq} is not JSON (${(error as Error).message})`, 'inside', 'Nothing was changed: the run stays plain.');
    }
    let sealed: JournalRecord = sealRecordContent(record, sealer);
    const link = sealed.snapshot?.after;
    if (link && before && link.seq === before.seq) sealed = { ...sealed, snapshot: { ...sealed.snapshot!, after: { seq: link.seq, crc: before.crc } } };
    const body = documentJson(sealed);
    bodies.push(body);
    before = { seq: record.seq, crc: checksumOf(body) };
  }
  if (bodies.length === 0) return;
  await client.query(
    `UPDATE da_records r SET body = x.body, bytes = octet_length(x.body)
       FROM unnest($2::integer[], $3::text[]) AS x(seq, body)
      WHERE r.run_id = $1 AND r.seq = x.seq`,
    [fleetRun, rows.map((row) => row.seq), bodies],
  );
}

/**
 * The plain schedules' tasks sealed, each under a key of its own as `schedule add` with keys makes
 * one, in one statement each that changes the row only while it is still the plain one read.
 */
async function sealPlainSchedules(db: Database, keys: MasterKeys, report: PgSealInReport): Promise<void> {
  const { rows } = await db.query<{ name: string; task: string }>('SELECT name, task FROM da_schedules WHERE task_key IS NULL ORDER BY name');
  for (const { name, task } of rows) {
    try {
      const sealed = await sealScheduleTask(task, name, keys);
      const { rowCount } = await db.query('UPDATE da_schedules SET task = $3, task_key = $4::jsonb, updated_at = now() WHERE name = $1 AND task_key IS NULL AND task = $2', [
        name,
        task,
        sealed.task,
        JSON.stringify(sealed.wrapped),
      ]);
      if (rowCount === 1) report.schedules.push(name);
    } catch (error) {
      report.schedulesFailed.push({ schedule: name, error: error as Error });
    }
  }
}
