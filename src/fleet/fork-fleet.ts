/**
 * Forking a fleet run into a new fleet run: the parent's records 0..SEQ (and, with a message,
 * the REOPEN record that continues it) under a new run row with the parent's spec, in one
 * transaction, so a crash leaves the whole child or none. The parent's rows are only read. An
 * unfinished child is claimable at once: a worker resumes it like any run whose worker died.
 */
import { randomUUID } from 'node:crypto';
import type { Pool } from 'pg';
import { isFinishedState } from '../../machines/agent-loop.types.ts';
import { ForkRefusedError } from '../fork/fork-errors.ts';
import { planFork } from '../fork/fork-plan.ts';
import type { ForkResult } from '../fork/fork-run.ts';
import { checkMessageText } from '../core/continue-run.ts';
import { documentJson } from '../store/framing.ts';
import { PgRunStore } from '../store/pg/pg-store.ts';
import { inTransaction } from '../store/pg/transaction.ts';

export interface FleetForkOptions {
  /** The parent: a fleet run's id. */
  run: string;
  /** The new run's id (default: a new UUID); refused when a run of that id exists. */
  toRun?: string | undefined;
  at?: number | undefined;
  message?: string | undefined;
  maxTurns?: number | undefined;
}

export interface FleetForkResult extends Omit<ForkResult, 'lineageNoteProblem'> {
  /** The new run's id in da_runs (its journal's run id is `runId`). */
  fleetRun: string;
  /** A child forked at a final state without a message is finished (stopped at a limit: until raised): no worker takes it up. */
  finished: boolean;
}

export async function forkFleetRun(pool: Pool, options: FleetForkOptions): Promise<FleetForkResult> {
  const parent = new PgRunStore(pool, options.run);
  if (options.message !== undefined) checkMessageText(parent.location, options.message);
  const toRun = options.toRun ?? randomUUID();
  if (toRun === options.run) throw new ForkRefusedError(parent.location, 'same-run', 'the fork would go where the run is: give another --to-run ID (or none for a new one). Nothing was written.');
  const plan = planFork(parent.location, await parent.load(), options, Date.now(), options.run);
  const bodies = plan.records.map((record) => documentJson(record));
  // A child forked where its parent stopped at a limit is stopped too, not finished: a raise lets it go on.
  const finished = isFinishedState(plan.state);
  await inTransaction(pool, async (client) => {
    const added = await client.query(
      `INSERT INTO da_runs (id, spec, header, state, turn, records, finished, awaiting, awaiting_since)
       SELECT $2, spec, $3::jsonb, $4, $5, $6, $7, $8, to_timestamp($9::double precision / 1000) FROM da_runs WHERE id = $1
       ON CONFLICT (id) DO NOTHING`,
      [options.run, toRun, JSON.stringify(plan.header), plan.state, plan.turn, plan.records.length, finished, plan.awaiting?.tool_use_id ?? null, plan.awaiting?.since ?? null],
    );
    if (added.rowCount !== 1) {
      throw new ForkRefusedError(parent.location, 'target-holds-run', `a fleet run ${toRun} already exists: give another --to-run ID (or none for a new one). Nothing was written.`);
    }
    await client.query(
      `INSERT INTO da_records (run_id, seq, epoch, body, bytes)
       SELECT $1, seq - 1, 0, body, octet_length(body) FROM unnest($2::text[]) WITH ORDINALITY AS r(body, seq)`,
      [toRun, bodies],
    );
  });
  return {
    runId: plan.header.runId,
    fleetRun: toRun,
    location: `PostgreSQL run ${toRun}`,
    forkedFrom: plan.header.forkedFrom!,
    parentLastSeq: plan.lastSeq,
    state: plan.state,
    records: plan.records.length,
    openCalls: plan.openCalls.map((call) => ({ id: call.id, name: call.name })),
    afterFork: plan.afterFork,
    finished,
  };
}
