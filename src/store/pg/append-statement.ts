/**
 * The statement that appends records to a run: one statement, so one transaction, fenced by the
 * writer's lease epoch. The run's row is updated first, under the lease's epoch: that UPDATE
 * takes the row's lock (a claim that commits meanwhile is seen: the epoch no longer matches, and
 * nothing is written), and the records are inserted only from the row it updated. What the write
 * learnt (the lease's time left, whether a control request waits) is returned by the same UPDATE;
 * when nothing was written, the run's lease as the statement found it is returned instead.
 *
 * One record, the usual case, goes as plain values: no arrays to escape, unnest and plan. Several
 * go as arrays. The two texts take the same parameters in the same places.
 *
 * A REOPEN record is a process taking the run up with what it brought: the operator's raise of
 * the run's limits (da_controls, kind 'raise') is deleted in that same statement, so the raise is
 * applied once, whatever kills the worker before or after (the claim reads it with the lease).
 */
import { isFinishedState } from '../../../machines/agent-loop.types.ts';
import type { JournalRecord } from '../journal-record.ts';

/** What a write returns: whether it landed; when it did not, the run's lease as the statement found it (null: no run). */
export interface AppendOutcome {
  written: boolean;
  lease_epoch: string | null;
  lease_owner: string | null;
  lease_left_ms: number | null;
  controls: boolean;
}

function appendText(rows: string): string {
  return `WITH moved AS (
           UPDATE da_runs SET state = $6, turn = coalesce($7, turn), records = $12, finished = $8, updated_at = now(),
                  snapshot_seq = coalesce($14::integer, snapshot_seq),
                  awaiting = CASE WHEN $9 THEN $10::text ELSE awaiting END,
                  awaiting_since = CASE WHEN $9 THEN to_timestamp($13::double precision / 1000) ELSE awaiting_since END
            WHERE id = $1 AND lease_epoch = $2 AND set_config('synchronous_commit', $11, true) IS NOT NULL
            RETURNING lease_epoch, lease_owner, (extract(epoch FROM lease_expires_at - now()) * 1000)::float8 AS lease_left_ms,
                      EXISTS (SELECT 1 FROM da_controls c WHERE c.run_id = $1 AND c.kind <> 'raise') AS controls
         ), added AS (
           INSERT INTO da_records (run_id, seq, epoch, body, bytes) SELECT $1, r.seq, $2, r.body, r.bytes FROM moved, ${rows}
         ), raised AS (
           DELETE FROM da_controls c USING moved WHERE $15::boolean AND c.run_id = $1 AND c.kind = 'raise'
         )
         SELECT true AS written, lease_epoch, lease_owner, lease_left_ms, controls FROM moved
         UNION ALL
         SELECT false, r.lease_epoch, r.lease_owner, NULL, false FROM (SELECT 1) AS one LEFT JOIN da_runs r ON r.id = $1
          WHERE NOT EXISTS (SELECT 1 FROM moved)`;
}

// Named: parsed and planned once per connection, not for every record.
const ONE = { name: 'da_append_one_v7', text: appendText('(SELECT $3::integer AS seq, $4::text AS body, $5::integer AS bytes) AS r') };
const MANY = { name: 'da_append_v7', text: appendText('unnest($3::integer[], $4::text[], $5::integer[]) AS r(seq, body, bytes)') };

/**
 * The query for `records` (in order, each with its JSON body and its length in bytes) under the
 * lease's epoch; `sync`: whether the commit waits for the WAL's flush.
 */
export function appendQuery(runId: string, epoch: number, records: readonly JournalRecord[], bodies: readonly string[], bytes: readonly number[], sync: boolean) {
  const last = records[records.length - 1]!;
  const one = records.length === 1;
  let turn: number | null = null;
  let awaited: JournalRecord | undefined;
  let snapshotSeq: number | null = null;
  let reopened = false;
  for (const record of records) {
    if (record.turn !== undefined) turn = record.turn;
    if (record.awaiting !== undefined) awaited = record;
    if (record.snapshot !== undefined) snapshotSeq = record.seq;
    if (record.event === 'REOPEN') reopened = true;
  }
  return {
    ...(one ? ONE : MANY),
    values: [
      runId,
      epoch,
      one ? last.seq : records.map((record) => record.seq),
      one ? bodies[0]! : bodies,
      one ? bytes[0]! : bytes,
      last.state,
      turn,
      // A run stopped at a limit is not finished: an operator's raise lets a worker take it up.
      isFinishedState(last.state),
      // What the run waits for, kept on the row so a claim can tell whether a decision for it exists.
      awaited !== undefined,
      awaited?.awaiting?.tool_use_id ?? null,
      sync ? 'on' : 'off',
      last.seq + 1,
      awaited?.awaiting?.since ?? null,
      snapshotSeq,
      reopened,
    ],
  };
}
