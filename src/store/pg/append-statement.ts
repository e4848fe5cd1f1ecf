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
import type { JournalHeader, JournalRecord } from '../journal/journal-record.ts';
import { SPEND_MONTH } from './tenant-limits.ts';

/**
 * What a write charges to its run's tenant: the usage of the replies its records count, for a
 * tenant with a quota or a rate limit (a write without one uses the statements without these
 * parts, as cheap as before). Charged in the write's own statement, so a record and its charge
 * commit together: a write that is redone after a crash was not committed, and charges nothing.
 */
export interface TenantCharge {
  tenant: string;
  /** US dollars at list prices, in millionths of a millionth (exact integers: the sums are exact). */
  picoUsd: bigint;
  tokens: number;
  replies: number;
  /** Whether the tenant has a rate limit of tokens: the window's row counts them too. */
  window: boolean;
}

/** Dollars in millionths of a millionth: each charge rounded once, so that sums of charges are exact. */
export function picoUsdOf(usd: number): bigint {
  return BigInt(Math.round(usd * 1e12));
}

/** A charge's dollars as exact decimal text, for a numeric column. */
export function usdText(picoUsd: bigint): string {
  const negative = picoUsd < 0n;
  const digits = (negative ? -picoUsd : picoUsd).toString().padStart(13, '0');
  return `${negative ? '-' : ''}${digits.slice(0, -12)}.${digits.slice(-12)}`;
}

/** The charge's parts of a run's append: the month's spend, and the window's tokens when it has a rate limit of them. */
const CHARGED_ONE = `, charged AS (
           INSERT INTO da_tenant_spend AS s (tenant, month, cost_usd, tokens, replies)
           SELECT $16, ${SPEND_MONTH}, $17::numeric, $18, $19 FROM moved
           ON CONFLICT (tenant, month) DO UPDATE SET cost_usd = s.cost_usd + excluded.cost_usd, tokens = s.tokens + excluded.tokens,
             replies = s.replies + excluded.replies, updated_at = now()
         ), windowed AS (
           UPDATE da_tenant_window w SET tokens = w.tokens + $18 FROM moved WHERE $20::boolean AND w.tenant = $16
         )`;

/** What a write returns: whether it landed; when it did not, the run's lease as the statement found it (null: no run). */
export interface AppendOutcome {
  written: boolean;
  lease_epoch: string | null;
  lease_owner: string | null;
  lease_left_ms: number | null;
  controls: boolean;
}

function appendText(rows: string, charged = ''): string {
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
         )${charged}
         SELECT true AS written, lease_epoch, lease_owner, lease_left_ms, controls FROM moved
         UNION ALL
         SELECT false, r.lease_epoch, r.lease_owner, NULL, false FROM (SELECT 1) AS one LEFT JOIN da_runs r ON r.id = $1
          WHERE NOT EXISTS (SELECT 1 FROM moved)`;
}

// Named: parsed and planned once per connection, not for every record.
const ONE = { name: 'da_append_one_v7', text: appendText('(SELECT $3::integer AS seq, $4::text AS body, $5::integer AS bytes) AS r') };
const MANY = { name: 'da_append_v7', text: appendText('unnest($3::integer[], $4::text[], $5::integer[]) AS r(seq, body, bytes)') };
const ONE_CHARGED = { name: 'da_append_one_charged_v1', text: appendText('(SELECT $3::integer AS seq, $4::text AS body, $5::integer AS bytes) AS r', CHARGED_ONE) };
const MANY_CHARGED = { name: 'da_append_charged_v1', text: appendText('unnest($3::integer[], $4::text[], $5::integer[]) AS r(seq, body, bytes)', CHARGED_ONE) };

/** What a write sets on the run's row, as of the last of its records. */
interface RowFacts {
  state: string;
  turn: number | null;
  finished: boolean;
  awaits: boolean;
  awaiting: string | null;
  awaitingSince: number | null;
  records: number;
  snapshotSeq: number | null;
  reopened: boolean;
}

function rowFactsOf(records: readonly JournalRecord[]): RowFacts {
  const last = records[records.length - 1]!;
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
    state: last.state,
    turn,
    // A run stopped at a limit is not finished: an operator's raise lets a worker take it up.
    finished: isFinishedState(last.state),
    // What the run waits for, kept on the row so a claim can tell whether a decision for it exists.
    awaits: awaited !== undefined,
    awaiting: awaited?.awaiting?.tool_use_id ?? null,
    awaitingSince: awaited?.awaiting?.since ?? null,
    records: last.seq + 1,
    snapshotSeq,
    reopened,
  };
}

/**
 * The query for `records` (in order, each with its JSON body and its length in bytes) under the
 * lease's epoch; `sync`: whether the commit waits for the WAL's flush.
 */
export function appendQuery(runId: string, epoch: number, records: readonly JournalRecord[], bodies: readonly string[], bytes: readonly number[], sync: boolean, charge?: TenantCharge) {
  const facts = rowFactsOf(records);
  const one = records.length === 1;
  const statement = charge ? (one ? ONE_CHARGED : MANY_CHARGED) : one ? ONE : MANY;
  const charging = charge ? [charge.tenant, usdText(charge.picoUsd), charge.tokens, charge.replies, charge.window] : [];
  return {
    ...statement,
    values: [
      runId,
      epoch,
      one ? records[0]!.seq : records.map((record) => record.seq),
      one ? bodies[0]! : bodies,
      one ? bytes[0]! : bytes,
      facts.state,
      facts.turn,
      facts.finished,
      facts.awaits,
      facts.awaiting,
      sync ? 'on' : 'off',
      facts.records,
      facts.awaitingSince,
      facts.snapshotSeq,
      facts.reopened,
      ...charging,
    ],
  };
}

/** One run's part of a statement that appends for several runs. */
export interface RunAppend {
  runId: string;
  epoch: number;
  records: readonly JournalRecord[];
  bodies: readonly string[];
  bytes: readonly number[];
  sync: boolean;
  /** Given when the run's first record is written: its journal header, and the row must have no record yet. */
  header?: JournalHeader | undefined;
  /** What the records charge to the run's tenant (none: nothing to charge, or no quota or rate limit to charge it to). */
  charge?: TenantCharge | undefined;
}

/**
 * The statement that writes a run's first record and its header, fenced like an append and only
 * on a row with no record yet; its answer has an append's shape.
 */
export function createQuery(runId: string, epoch: number, header: JournalHeader, first: JournalRecord, body: string, bytes: number) {
  return {
    name: 'da_create_v7',
    text: `WITH holder AS (
             SELECT id FROM da_runs WHERE id = $1 AND lease_epoch = $2 AND records = 0 FOR UPDATE
           ), added AS (
             INSERT INTO da_records (run_id, seq, epoch, body, bytes) SELECT $1, 0, $2, $3, $4 FROM holder RETURNING seq
           ), moved AS (
             UPDATE da_runs SET header = $5, state = $6, turn = $7, records = 1, finished = false, updated_at = now()
              WHERE id = $1 AND EXISTS (SELECT 1 FROM added)
              RETURNING lease_epoch, lease_owner, (extract(epoch FROM lease_expires_at - now()) * 1000)::float8 AS lease_left_ms,
                        EXISTS (SELECT 1 FROM da_controls c WHERE c.run_id = $1 AND c.kind <> 'raise') AS controls
           )
           SELECT true AS written, lease_epoch, lease_owner, lease_left_ms, controls FROM moved
           UNION ALL
           SELECT false, r.lease_epoch, r.lease_owner, NULL, false FROM (SELECT 1) AS one LEFT JOIN da_runs r ON r.id = $1
            WHERE NOT EXISTS (SELECT 1 FROM moved)`,
    values: [runId, epoch, body, bytes, JSON.stringify(header), first.state, first.turn ?? 0],
  };
}

/** A run's outcome in a statement for several runs: as AppendOutcome, and whose it is. */
export interface RunAppendOutcome extends AppendOutcome {
  run_id: string;
}

/**
 * Several runs' records in one statement, so one transaction and one commit: each run's row is
 * updated under its own lease's epoch and only the runs whose row was updated get their records,
 * as appendText does for one; a run's first record (a header given) only on a row with none yet. The rows are locked in the order of their ids first, so that two
 * such statements wait for each other rather than deadlock. The commit waits for the WAL's flush
 * when any run's records ask for it.
 */
function appendRunsText(charged: string): string {
  return `WITH input AS (
           SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[], $4::integer[], $5::boolean[], $6::boolean[], $7::text[],
                                $8::integer[], $9::double precision[], $10::integer[], $11::boolean[], $17::jsonb[])
                      AS i(run_id, epoch, state, turn, finished, awaits, awaiting, records, awaiting_since, snapshot_seq, reopened, header)
         ), locked AS (
           SELECT r.id FROM da_runs r JOIN input i ON r.id = i.run_id AND r.lease_epoch = i.epoch ORDER BY r.id FOR UPDATE OF r
         ), moved AS (
           UPDATE da_runs r SET state = i.state, turn = coalesce(i.turn, r.turn), records = i.records, finished = i.finished, updated_at = now(),
                  header = coalesce(i.header, r.header),
                  snapshot_seq = coalesce(i.snapshot_seq, r.snapshot_seq),
                  awaiting = CASE WHEN i.awaits THEN i.awaiting ELSE r.awaiting END,
                  awaiting_since = CASE WHEN i.awaits THEN to_timestamp(i.awaiting_since / 1000) ELSE r.awaiting_since END
             FROM input i, locked l
            WHERE r.id = i.run_id AND l.id = r.id AND r.lease_epoch = i.epoch AND (i.header IS NULL OR r.records = 0)
              AND set_config('synchronous_commit', $12, true) IS NOT NULL
            RETURNING r.id, r.lease_epoch, r.lease_owner, (extract(epoch FROM r.lease_expires_at - now()) * 1000)::float8 AS lease_left_ms,
                      EXISTS (SELECT 1 FROM da_controls c WHERE c.run_id = r.id AND c.kind <> 'raise') AS controls
         ), added AS (
           INSERT INTO da_records (run_id, seq, epoch, body, bytes)
           SELECT x.run_id, x.seq, m.lease_epoch, x.body, x.bytes
             FROM unnest($13::text[], $14::integer[], $15::text[], $16::integer[]) AS x(run_id, seq, body, bytes) JOIN moved m ON m.id = x.run_id
         ), raised AS (
           DELETE FROM da_controls c USING moved m, input i WHERE m.id = i.run_id AND i.reopened AND c.run_id = m.id AND c.kind = 'raise'
         )${charged}
         SELECT i.run_id, m.id IS NOT NULL AS written, coalesce(m.lease_epoch, r.lease_epoch) AS lease_epoch,
                coalesce(m.lease_owner, r.lease_owner) AS lease_owner, m.lease_left_ms, coalesce(m.controls, false) AS controls
           FROM input i LEFT JOIN moved m ON m.id = i.run_id LEFT JOIN da_runs r ON r.id = i.run_id`;
}

/**
 * The charges of the runs whose records were written, summed by tenant (a statement may not
 * update a row twice), in the order of the tenants' names, as rows are locked in the order of
 * the runs' ids: two such statements wait for each other rather than deadlock.
 */
const CHARGED_RUNS = `, charges AS (
           SELECT c.tenant, sum(c.cost_usd) AS cost_usd, sum(c.tokens) AS tokens, sum(c.replies) AS replies, bool_or(c.window) AS window
             FROM unnest($1::text[], $18::text[], $19::numeric[], $20::bigint[], $21::integer[], $22::boolean[])
                  AS c(run_id, tenant, cost_usd, tokens, replies, window) JOIN moved m ON m.id = c.run_id
            WHERE c.tenant IS NOT NULL GROUP BY c.tenant
         ), charged AS (
           INSERT INTO da_tenant_spend AS s (tenant, month, cost_usd, tokens, replies)
           SELECT tenant, ${SPEND_MONTH}, cost_usd, tokens, replies FROM charges ORDER BY tenant
           ON CONFLICT (tenant, month) DO UPDATE SET cost_usd = s.cost_usd + excluded.cost_usd, tokens = s.tokens + excluded.tokens,
             replies = s.replies + excluded.replies, updated_at = now()
         ), windowed AS (
           UPDATE da_tenant_window w SET tokens = w.tokens + c.tokens FROM charges c WHERE c.window AND w.tenant = c.tenant
         )`;

const MANY_RUNS = { name: 'da_append_runs_v8', text: appendRunsText('') };
const MANY_RUNS_CHARGED = { name: 'da_append_runs_charged_v1', text: appendRunsText(CHARGED_RUNS) };

/** The query for several runs' appends (each run once, its records in order). */
export function appendRunsQuery(appends: readonly RunAppend[]) {
  const facts = appends.map((append) => rowFactsOf(append.records));
  const column = <T>(pick: (fact: RowFacts) => T) => facts.map(pick);
  const recordRuns: string[] = [];
  const seqs: number[] = [];
  const bodies: string[] = [];
  const bytes: number[] = [];
  for (const append of appends) {
    append.records.forEach((record, index) => {
      recordRuns.push(append.runId);
      seqs.push(record.seq);
      bodies.push(append.bodies[index]!);
      bytes.push(append.bytes[index]!);
    });
  }
  const charged = appends.some((append) => append.charge !== undefined);
  const charges = charged
    ? [
        appends.map((append) => append.charge?.tenant ?? null),
        appends.map((append) => (append.charge ? usdText(append.charge.picoUsd) : null)),
        appends.map((append) => append.charge?.tokens ?? null),
        appends.map((append) => append.charge?.replies ?? null),
        appends.map((append) => append.charge?.window ?? null),
      ]
    : [];
  return {
    ...(charged ? MANY_RUNS_CHARGED : MANY_RUNS),
    values: [
      appends.map((append) => append.runId),
      appends.map((append) => append.epoch),
      column((f) => f.state),
      column((f) => f.turn),
      column((f) => f.finished),
      column((f) => f.awaits),
      column((f) => f.awaiting),
      column((f) => f.records),
      column((f) => f.awaitingSince),
      column((f) => f.snapshotSeq),
      column((f) => f.reopened),
      appends.some((append) => append.sync) ? 'on' : 'off',
      recordRuns,
      seqs,
      bodies,
      bytes,
      appends.map((append) => (append.header === undefined ? null : JSON.stringify(append.header))),
      ...charges,
    ],
  };
}
